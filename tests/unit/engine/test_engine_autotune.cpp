// Bucket autotuning in a one-rank world: every candidate is timed, the fastest is chosen, and the
// model's own parameters and gradients are left untouched.
#include <gtest/gtest.h>
#include <torch/nn/modules/linear.h>

#include <algorithm>
#include <utility>
#include <vector>

#include "comm/backend.h"
#include "engine/engine_autotune.h"
#include "test_world.h"

namespace ft {
namespace {

std::vector<NamedTensor> linear_parameters(torch::nn::Linear& layer) {
  std::vector<NamedTensor> out;
  for (auto& p : layer->named_parameters()) out.push_back({p.key(), p.value()});
  return out;
}

TEST(EngineAutotune, ChoosesTheFastestCandidate) {
  auto& world = test::world();
  auto backend = make_backend(world, BackendOptions{});
  torch::nn::Linear layer(64, 32);
  const auto before = layer->weight.clone();
  const std::vector<BucketSizes> candidates = {{0.001, 0.0005}, {0.004, 0.001}, {8, 1}};
  const AutotuneResult result = autotune_buckets(*backend, world, linear_parameters(layer), {}, candidates, 2);
  ASSERT_EQ(result.trials.size(), candidates.size());
  const auto fastest = std::min_element(result.trials.begin(), result.trials.end(),
                                        [](const BucketTrial& a, const BucketTrial& b) { return a.seconds < b.seconds; });
  EXPECT_EQ(result.best.bucket_mib, fastest->sizes.bucket_mib);
  EXPECT_EQ(result.best.first_bucket_mib, fastest->sizes.first_bucket_mib);
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    EXPECT_EQ(result.trials[i].sizes.bucket_mib, candidates[i].bucket_mib);
    EXPECT_GT(result.trials[i].seconds, 0);
  }
  EXPECT_FALSE(layer->weight.grad().defined());
  EXPECT_TRUE(at::equal(layer->weight, before));
}

// One rank all-reduces nothing (GradientEngineOptions::reduce_alone), so there is nothing to tune: the
// configured sizes stay (several ranks: tests/mpi/train/engine_autotune_test.cpp).
TEST(EngineAutotune, OneRankKeepsItsBucketSizes) {
  auto& world = test::world();
  auto backend = make_backend(world, BackendOptions{});
  torch::nn::Linear layer(16, 8);
  GradientEngineOptions options;
  options.bucket_mib = 1000;
  options.first_bucket_mib = 3;
  apply_autotuned_buckets(*backend, world, linear_parameters(layer), options);
  EXPECT_EQ(options.bucket_mib, 1000);
  EXPECT_EQ(options.first_bucket_mib, 3);
}

// docs/multinode.md: "4 to 64 MiB, first bucket 1 or 4 MiB".
TEST(EngineAutotune, DefaultCandidatesAreTheDocumentedGrid) {
  std::vector<std::pair<double, double>> got;
  for (const BucketSizes& c : default_bucket_candidates()) got.push_back({c.bucket_mib, c.first_bucket_mib});
  EXPECT_EQ(got, (std::vector<std::pair<double, double>>{
                     {4, 1}, {4, 4}, {12, 1}, {12, 4}, {25, 1}, {25, 4}, {64, 1}, {64, 4}}));
}

TEST(EngineAutotune, RefusesNoCandidates) {
  auto& world = test::world();
  auto backend = make_backend(world, BackendOptions{});
  torch::nn::Linear layer(4, 2);
  EXPECT_THROW(autotune_buckets(*backend, world, linear_parameters(layer), {}, {}, 1), Error);
}

}  // namespace
}  // namespace ft
