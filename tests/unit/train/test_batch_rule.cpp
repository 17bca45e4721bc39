// The elastic batch rule: which per-rank batch, accumulation and learning-rate factor a run resumed on
// another number of ranks uses, and the error where the global batch cannot be kept.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <utility>
#include <vector>

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

// The global rule as a property over many worlds, primes included: every accepted split multiplies back to
// the reference global batch with at most data.batch_size per rank and the fewest accumulation steps, and
// a refusal happens exactly where no split exists (checked by trying every accumulation).
struct SplitCase {
  std::int64_t reference;
  int ranks, batch;
};

bool split_exists(const SplitCase& c, std::int64_t accumulation) {
  const std::int64_t split = std::int64_t{c.ranks} * accumulation;
  return c.reference % split == 0 && c.reference / split <= c.batch;
}

// What is wrong with the rule's answer for `c`, or "".
std::string global_rule_problem(const SplitCase& c) {
  std::int64_t fewest = 0;
  for (std::int64_t a = c.reference; a >= 1; --a)
    if (split_exists(c, a)) fewest = a;
  const std::string where = cat("global ", c.reference, " on ", c.ranks, " ranks, batch ", c.batch, ": ");
  BatchLayout l;
  try {
    l = resolve_batch(input(c.reference, c.ranks, c.batch, 3));
  } catch (const Error& e) {
    return fewest == 0 ? "" : cat(where, "refused although ", c.ranks, " x ", c.reference / (c.ranks * fewest), " x ",
                                  fewest, " exists: ", e.what());
  }
  if (fewest == 0) return cat(where, "accepted ", l.per_rank_batch, " x ", l.accumulation, " but no split exists");
  const std::int64_t trained = std::int64_t{l.per_rank_batch} * c.ranks * l.accumulation;
  if (trained != c.reference || l.global_batch != c.reference)
    return cat(where, l.per_rank_batch, " x ", c.ranks, " x ", l.accumulation, " trains ", trained,
               " images a step, claiming ", l.global_batch);
  if (l.per_rank_batch < 1 || l.per_rank_batch > c.batch)
    return cat(where, "per-rank batch ", l.per_rank_batch, " outside 1..", c.batch);
  if (l.accumulation != fewest) return cat(where, l.accumulation, " accumulation steps where ", fewest, " suffice");
  if (l.lr_factor != 1.0) return cat(where, "learning-rate factor ", l.lr_factor, " where the batch is kept");
  return "";
}

TEST(BatchRule, GlobalRuleSplitsExactlyWhereASplitExists) {
  std::vector<std::int64_t> references;
  for (std::int64_t g = 1; g <= 130; ++g) references.push_back(g);
  for (std::int64_t g : {192, 197, 199, 210, 256, 257, 384, 509, 512, 1024}) references.push_back(g);
  std::vector<std::string> problems;
  int cases = 0, refused = 0;
  for (std::int64_t g : references)
    for (int ranks : {1, 2, 3, 4, 5, 6, 7, 8, 9, 11, 12, 13, 16, 17, 31, 64})
      for (int batch : {1, 2, 3, 5, 7, 8, 13, 16, 32, 64, 128, 2048}) {
        const SplitCase c{g, ranks, batch};
        ++cases;
        refused += g % ranks != 0;
        const std::string p = global_rule_problem(c);
        if (!p.empty()) problems.push_back(p);
      }
  ASSERT_GT(refused, 0) << "the sweep must include worlds that cannot keep the batch";
  std::string first;
  for (std::size_t i = 0; i < problems.size() && i < 8; ++i) first += "\n  " + problems[i];
  EXPECT_TRUE(problems.empty()) << problems.size() << " of " << cases << " worlds resolved wrongly:" << first;
}

// What is wrong with the local rule's answer, or "": the configured split, and `factor` on the rate.
std::string local_rule_problem(std::int64_t reference, int ranks, int batch, int accumulation, LrScaling scaling,
                               double factor) {
  const auto l = resolve_batch(input(reference, ranks, batch, accumulation, ElasticBatch::local, scaling));
  const bool right = l.per_rank_batch == batch && l.accumulation == accumulation &&
                     l.global_batch == std::int64_t{ranks} * batch * accumulation &&
                     std::abs(l.lr_factor - factor) <= 1e-12;  // false for NaN
  if (right) return "";
  return cat("reference ", reference, ", ", ranks, " ranks x ", batch, " x ", accumulation, " (", choice_name(scaling),
             "): got ", l.per_rank_batch, " x ", l.accumulation, " = ", l.global_batch, ", factor ", l.lr_factor,
             " (want ", factor, ")");
}

// The local rule keeps the configured split whatever the reference, and scales the learning rate by the
// ratio of the global batches (linear), its square root, or not at all.
TEST(BatchRule, LocalRuleKeepsTheConfiguredSplitInEveryWorld) {
  std::vector<std::string> problems;
  for (std::int64_t reference : {1, 7, 64, 97, 128})
    for (int ranks : {1, 2, 3, 5, 8})
      for (int batch : {1, 3, 32})
        for (int accumulation : {1, 2, 5}) {
          const double ratio = static_cast<double>(ranks * batch * accumulation) / static_cast<double>(reference);
          const std::pair<LrScaling, double> factors[] = {
              {LrScaling::linear, ratio}, {LrScaling::sqrt, std::sqrt(ratio)}, {LrScaling::none, 1.0}};
          for (const auto& [scaling, factor] : factors) {
            const std::string p = local_rule_problem(reference, ranks, batch, accumulation, scaling, factor);
            if (!p.empty()) problems.push_back(p);
          }
        }
  std::string first;
  for (std::size_t i = 0; i < problems.size() && i < 8; ++i) first += "\n  " + problems[i];
  EXPECT_TRUE(problems.empty()) << problems.size() << " local layouts wrong:" << first;
}

}  // namespace
}  // namespace ft
