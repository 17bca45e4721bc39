// Data parallelism is exact: N ranks with batch b (and a accumulation steps) end with the same parameters as
// one rank with batch N*a*b over the same samples (fp64, global shuffle), for every host backend.
#include <gtest/gtest.h>

#include "comm/backend.h"
#include "engine/replica_check.h"
#include "runtime/error.h"
#include "train/trainer.h"
#include "train_fixture.h"

namespace ft::test {
namespace {

// `accumulation` micro-batches per step on every rank against one rank taking the whole step at once.
void expect_equivalent(const std::string& backend_name, int accumulation = 1) {
  const World& world = ft::test::world();
  const auto path = synthetic_shards("equivalence", 240, 2);
  Config c = small_config(path, backend_name);
  c.train.accumulation_steps = accumulation;
  BackendOptions options;
  options.name = choice_from<BackendName>("backend", backend_name);
  options.stall_timeout_s = 20;
  auto backend = make_backend(world, options);
  Trainer parallel(c, world, *backend, at::Device(at::kCPU));
  const auto outcome = parallel.run();
  const auto mine = parameters_of(parallel);
  EXPECT_NO_THROW(check_replicas(mine, world, -1)) << "replicas differ after training";

  if (world.rank() == 0) {
    World alone(MPI_COMM_SELF);
    Config single = c;
    single.data.batch_size = c.data.batch_size * world.size() * accumulation;
    single.train.accumulation_steps = 1;
    BackendOptions self_options = options;
    self_options.name = BackendName::mpi;
    auto self_backend = make_backend(alone, self_options);
    Trainer reference(single, alone, *self_backend, at::Device(at::kCPU));
    const auto ref_outcome = reference.run();
    const auto expected = parameters_of(reference);
    ASSERT_EQ(mine.size(), expected.size());
    ASSERT_FALSE(mine.empty()) << "no parameters to compare";
    // Each tensor on its own, so that a NaN difference fails (a running maximum would drop it).
    for (std::size_t i = 0; i < mine.size(); ++i) {
      const double difference = (mine[i] - expected[i]).abs().max().item<double>();
      EXPECT_LE(difference, 1e-10) << backend_name << " x" << accumulation << ": parameter " << i
                                   << " differs from the single rank's by " << difference;
    }
    // Equal parameters prove something only if training moved them: the loss fell.
    EXPECT_LT(outcome.epochs.back().train_loss, 0.9 * outcome.epochs.front().train_loss)
        << backend_name << " x" << accumulation << ": the run did not learn";
    EXPECT_NEAR(outcome.epochs.back().train_loss, ref_outcome.epochs.back().train_loss, 1e-10)
        << backend_name << " x" << accumulation << ": final training loss";
  }
  world.barrier();
}

TEST(Equivalence, MpiBackendMatchesSingleRankWithLargerBatch) { expect_equivalent("mpi"); }

TEST(Equivalence, AccumulatedMicroBatchesMatchSingleRankWithWholeStep) { expect_equivalent("mpi", 2); }

#ifdef FUSETRAIN_WITH_GLOO
TEST(Equivalence, GlooBackendMatchesSingleRankWithLargerBatch) { expect_equivalent("gloo"); }
#endif

// One bit of one parameter changed on every rank but 0 is found, and those ranks are named on every rank.
TEST(ReplicaCheck, AReplicaOffByOneBitIsNamed) {
  const World& world = ft::test::world();
  std::vector<at::Tensor> tensors = {at::arange(6, at::kFloat), at::ones({2, 3}, at::kDouble)};
  EXPECT_NO_THROW(check_replicas(tensors, world, 7));
  if (world.rank() > 0) {
    tensors[1].view(at::kLong).data_ptr<std::int64_t>()[5] ^= 1;  // the lowest mantissa bit of the last element
  }
  std::string named;
  for (int r = 1; r < world.size(); ++r) named += (r > 1 ? "," : "") + std::to_string(r);
  try {
    check_replicas(tensors, world, 7);
    FAIL() << "rank " << world.rank() << ": diverged replicas not detected";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("replicas diverged at step 7: parameters on rank(s) " + named + " differ"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace ft::test
