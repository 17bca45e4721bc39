// The elastic batch rule: which per-rank batch, accumulation and learning-rate factor a run resumed on
// another number of ranks uses, and the error where the global batch cannot be kept.
#include <gtest/gtest.h>

#include <cmath>

#include "runtime/error.h"
#include "train/batch_rule.h"

namespace ft {
namespace {

BatchRuleInput input(std::int64_t reference, int ranks, int batch, int accumulation = 1,
                     ElasticBatch rule = ElasticBatch::global, LrScaling scaling = LrScaling::linear) {
  return {reference, ranks, batch, accumulation, rule, scaling};
}

TEST(BatchRule, SameWorldKeepsTheConfiguredSplit) {
  const auto l = resolve_batch(input(64, 2, 32));
  EXPECT_EQ(l.per_rank_batch, 32);
  EXPECT_EQ(l.accumulation, 1);
  EXPECT_EQ(l.global_batch, 64);
  EXPECT_EQ(l.lr_factor, 1.0);
}

TEST(BatchRule, FewerRanksAccumulateRatherThanGrowThePerRankBatch) {
  const auto l = resolve_batch(input(64, 1, 32));
  EXPECT_EQ(l.per_rank_batch, 32);
  EXPECT_EQ(l.accumulation, 2);
  EXPECT_EQ(l.global_batch, 64);
}

TEST(BatchRule, MoreRanksShrinkThePerRankBatch) {
  const auto l = resolve_batch(input(64, 4, 32));
  EXPECT_EQ(l.per_rank_batch, 16);
  EXPECT_EQ(l.accumulation, 1);
}

TEST(BatchRule, AccumulatedRunsSplitTheirWholeStep) {
  // 2 ranks x 16 x 4 steps = 128 images; on 8 ranks one micro-batch of 16 each.
  const auto l = resolve_batch(input(128, 8, 16, 4));
  EXPECT_EQ(l.per_rank_batch, 16);
  EXPECT_EQ(l.accumulation, 1);
  // On 3 ranks 128 does not divide: refused, naming the option that would allow it.
  try {
    resolve_batch(input(128, 3, 16, 4));
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("cannot be split over 3 ranks"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("elastic.batch: local"), std::string::npos) << e.what();
  }
}

TEST(BatchRule, LocalKeepsThePerRankBatchAndScalesTheLearningRate) {
  const auto linear = resolve_batch(input(64, 4, 32, 1, ElasticBatch::local, LrScaling::linear));
  EXPECT_EQ(linear.per_rank_batch, 32);
  EXPECT_EQ(linear.global_batch, 128);
  EXPECT_DOUBLE_EQ(linear.lr_factor, 2.0);
  EXPECT_DOUBLE_EQ(resolve_batch(input(64, 4, 32, 1, ElasticBatch::local, LrScaling::sqrt)).lr_factor, std::sqrt(2.0));
  EXPECT_DOUBLE_EQ(resolve_batch(input(64, 1, 32, 1, ElasticBatch::local, LrScaling::none)).lr_factor, 1.0);
  EXPECT_DOUBLE_EQ(resolve_batch(input(64, 1, 32, 1, ElasticBatch::local, LrScaling::linear)).lr_factor, 0.5);
}

TEST(BatchRule, DescriptionNamesTheRuleAndTheSplit) {
  const auto in = input(64, 1, 32);
  EXPECT_EQ(describe_batch(in, resolve_batch(in)),
            "elastic.batch global keeps 64 images per step: 1 rank x 32 x 2 accumulation steps (learning rate "
            "unchanged)");
}

}  // namespace
}  // namespace ft
