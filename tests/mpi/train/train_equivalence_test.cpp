// Data parallelism is exact: N ranks with batch b end with the same parameters as one rank with batch
// N*b over the same samples (fp64, global shuffle), for every host backend; replicas stay bit-identical.
#include <gtest/gtest.h>

#include "comm/backend.h"
#include "engine/replica_check.h"
#include "train/trainer.h"
#include "train_fixture.h"

namespace ft::test {
namespace {

std::vector<at::Tensor> parameters_of(const Trainer& trainer) {
  std::vector<at::Tensor> out;
  for (const auto& p : trainer.network()->parameters()) out.push_back(p.detach().clone());
  return out;
}

void expect_equivalent(const std::string& backend_name) {
  const World& world = ft::test::world();
  const auto path = synthetic_shards("equivalence", 240, 2);
  const Config c = small_config(path, backend_name);
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
    single.data.batch_size = c.data.batch_size * world.size();
    BackendOptions self_options = options;
    self_options.name = BackendName::mpi;
    auto self_backend = make_backend(alone, self_options);
    Trainer reference(single, alone, *self_backend, at::Device(at::kCPU));
    const auto ref_outcome = reference.run();
    const auto expected = parameters_of(reference);
    ASSERT_EQ(mine.size(), expected.size());
    double worst = 0;
    for (std::size_t i = 0; i < mine.size(); ++i)
      worst = std::max(worst, (mine[i] - expected[i]).abs().max().item<double>());
    EXPECT_LT(worst, 1e-10) << backend_name << ": largest parameter difference " << worst;
    EXPECT_NEAR(outcome.epochs.back().train_loss, ref_outcome.epochs.back().train_loss, 1e-10);
    EXPECT_GT(worst + 1, 0);  // parameters were compared
  }
  world.barrier();
}

TEST(Equivalence, MpiBackendMatchesSingleRankWithLargerBatch) { expect_equivalent("mpi"); }

#ifdef FUSETRAIN_WITH_GLOO
TEST(Equivalence, GlooBackendMatchesSingleRankWithLargerBatch) { expect_equivalent("gloo"); }
#endif

}  // namespace
}  // namespace ft::test
