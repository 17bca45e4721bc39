// Errors instead of hangs: ranks with different models fail at start-up naming the tensor and ranks;
// a rank that skips a parameter's gradient fails the step on every rank; uneven shards finish cleanly.
#include <gtest/gtest.h>
#include <torch/nn/modules/linear.h>

#include "comm/backend.h"
#include "engine/engine.h"
#include "runtime/error.h"
#include "train/trainer.h"
#include "train_fixture.h"

namespace ft::test {
namespace {

TEST(Negotiation, DifferentModelsAreNamedOnEveryRank) {
  const World& world = ft::test::world();
  auto backend = make_backend(world, BackendOptions{});
  torch::nn::Linear layer(4, world.rank() == 1 ? 3 : 2);
  std::vector<NamedTensor> named;
  for (auto& p : layer->named_parameters()) named.push_back({p.key(), p.value()});
  try {
    GradientEngine engine(*backend, world, named, GradientEngineOptions{});
    FAIL() << "rank " << world.rank() << ": mismatch not detected";
  } catch (const Error& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("weight float32 [3, 4]' on rank 1"), std::string::npos) << msg;
    EXPECT_NE(msg.find("ranks disagree"), std::string::npos) << msg;
  }
}

TEST(MissingGradient, RankSkippingAParameterFailsEveryRank) {
  const World& world = ft::test::world();
  auto backend = make_backend(world, BackendOptions{});
  auto used = at::ones({3}).requires_grad_(true);
  auto skipped = at::ones({2}).requires_grad_(true);
  GradientEngine engine(*backend, world, {{"used", used}, {"skipped", skipped}}, GradientEngineOptions{});
  engine.prepare(true);
  auto loss = used.sum();
  if (world.rank() == 0) loss = loss + skipped.sum();  // every other rank skips it: one rank, or several
  loss.backward();
  std::string skipping = world.size() > 2 ? "ranks " : "rank ";
  for (int r = 1; r < world.size(); ++r) skipping += (r > 1 ? "," : "") + std::to_string(r);
  try {
    engine.finish();
    FAIL() << "rank " << world.rank() << ": missing gradient not detected";
  } catch (const Error& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("'skipped' on " + skipping + ";"), std::string::npos) << msg;
  }
}

TEST(UnevenShards, EveryRankRunsTheSameStepsAndFinishes) {
  const World& world = ft::test::world();
  // 101 images in 3 shards: slices differ by one image and cross shard boundaries.
  const auto path = synthetic_shards("uneven", 101, 3);
  for (const Remainder remainder : {Remainder::drop, Remainder::pad}) {
    Config c = small_config(path, "mpi");
    c.data.shuffle = Shuffle::local;
    c.data.remainder = remainder;
    c.data.batch_size = 16;
    c.precision.dtype = Precision::fp32;
    c.train.epochs = 1;
    auto backend = make_backend(world, BackendOptions{});
    const auto outcome = Trainer(c, world, *backend, at::Device(at::kCPU)).run();
    const std::int64_t per_rank_min = 101 / world.size();
    const std::int64_t per_rank_max = (101 + world.size() - 1) / world.size();
    const std::int64_t expected = remainder == Remainder::drop ? per_rank_min / 16 : (per_rank_max + 15) / 16;
    EXPECT_EQ(outcome.summary.optimizer_steps, expected) << remainder;
  }
}

}  // namespace
}  // namespace ft::test
