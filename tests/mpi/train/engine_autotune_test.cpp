// Bucket autotuning on real ranks: each rank times the candidates itself, yet every rank must make the
// same choice (an engine built from different bucket sizes on different ranks would not match up).
#include <gtest/gtest.h>
#include <torch/nn/modules/linear.h>

#include "comm/backend.h"
#include "engine/engine_autotune.h"
#include "train_fixture.h"

namespace ft::test {
namespace {

TEST(EngineAutotune, EveryRankChoosesTheSame) {
  const World& world = ft::test::world();
  BackendOptions options;
  options.stall_timeout_s = 20;
  auto backend = make_backend(world, options);
  torch::nn::Linear wide(512, 400), head(400, 5);
  std::vector<NamedTensor> named;
  for (auto& p : wide->named_parameters()) named.push_back({"wide." + p.key(), p.value()});
  for (auto& p : head->named_parameters()) named.push_back({"head." + p.key(), p.value()});
  const std::vector<BucketSizes> candidates = {{0.05, 0.01}, {0.2, 0.05}, {1, 0.1}, {4, 1}};
  const AutotuneResult result = autotune_buckets(*backend, world, named, {}, candidates, 2);
  double choice[2] = {result.best.bucket_mib, result.best.first_bucket_mib};
  double negated[2] = {-choice[0], -choice[1]};
  world.allreduce_max(choice, 2);
  world.allreduce_max(negated, 2);
  EXPECT_EQ(choice[0], -negated[0]) << "ranks chose different bucket sizes";
  EXPECT_EQ(choice[1], -negated[1]) << "ranks chose different first-bucket sizes";
  for (const BucketTrial& trial : result.trials) EXPECT_EQ(world.allreduce_max(trial.seconds), trial.seconds);
}

TEST(EngineAutotune, AppliesTheChoiceToTheOptions) {
  const World& world = ft::test::world();
  auto backend = make_backend(world, BackendOptions{});
  torch::nn::Linear layer(16, 8);
  std::vector<NamedTensor> named;
  for (auto& p : layer->named_parameters()) named.push_back({p.key(), p.value()});
  GradientEngineOptions options;
  options.bucket_mib = 1000;  // not a candidate: must be replaced
  apply_autotuned_buckets(*backend, world, named, options);
  bool is_candidate = false;
  for (const BucketSizes& c : default_bucket_candidates())
    is_candidate |= c.bucket_mib == options.bucket_mib && c.first_bucket_mib == options.first_bucket_mib;
  EXPECT_TRUE(is_candidate) << options.bucket_mib << " / " << options.first_bucket_mib;
}

}  // namespace
}  // namespace ft::test
