// Tests of fusion planning and of the start-up negotiation: bucket limits, reverse order, the smaller
// first and last buckets, oversize tensors, and mismatch messages that name the tensor and the ranks.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "comm/bucket_plan.h"
#include "runtime/error.h"

namespace ft {
namespace {

std::vector<TensorSpec> specs(const std::vector<std::int64_t>& sizes) {
  std::vector<TensorSpec> out;
  for (std::size_t i = 0; i < sizes.size(); ++i) out.push_back({"t" + std::to_string(i), DType::kFloat32, {sizes[i]}});
  return out;
}

TEST(BucketPlan, ReverseOrderSmallFirstBucketAndLimits) {
  // 4-byte elements: limits 400 B first, 1000 B after.
  const auto plan = plan_buckets(specs({50, 50, 200, 30, 60, 40}), 400, 1000, 1000);
  ASSERT_EQ(plan.size(), 3u);
  EXPECT_EQ(plan[0].tensors, (std::vector<std::size_t>{5, 4}));  // 160+240 = 400 B
  EXPECT_EQ(plan[1].tensors, (std::vector<std::size_t>{3, 2}));  // 120+800 = 920 B
  EXPECT_EQ(plan[2].tensors, (std::vector<std::size_t>{1, 0}));
  EXPECT_EQ(plan[0].offsets, (std::vector<std::int64_t>{0, 40}));
  EXPECT_EQ(plan[0].numel, 100);
  std::int64_t total = 0;
  for (const auto& b : plan) total += b.numel;
  EXPECT_EQ(total, 430);
}

TEST(BucketPlan, LargeLastBucketLeavesItsLastTensorsAlone) {
  // 4-byte elements: 40, 40, 40, 1200, 80 B; first 80 B, then 1000 B, last at most 100 B.
  const auto plan = plan_buckets(specs({10, 10, 10, 300, 20}), 80, 1000, 100);
  ASSERT_EQ(plan.size(), 4u);
  EXPECT_EQ(plan[0].tensors, (std::vector<std::size_t>{4}));
  EXPECT_EQ(plan[1].tensors, (std::vector<std::size_t>{3}));
  EXPECT_EQ(plan[2].tensors, (std::vector<std::size_t>{2}));     // what the greedy plan closed with, ...
  EXPECT_EQ(plan[3].tensors, (std::vector<std::size_t>{1, 0}));  // ... less its last 80 B
  EXPECT_EQ(plan[2].offsets, (std::vector<std::int64_t>{0}));
  EXPECT_EQ(plan[3].offsets, (std::vector<std::int64_t>{0, 10}));
  EXPECT_EQ(plan[2].numel, 10);
  EXPECT_EQ(plan[3].numel, 20);
}

TEST(BucketPlan, LastBucketSplitsOnlyWhereItCan) {
  // A single bucket, and a last bucket of one tensor, stay whole.
  EXPECT_EQ(plan_buckets(specs({10, 10, 10}), 1000, 1000, 4).size(), 1u);
  const auto plan = plan_buckets(specs({100, 10}), 40, 1000, 4);
  ASSERT_EQ(plan.size(), 2u);
  EXPECT_EQ(plan[1].tensors, (std::vector<std::size_t>{0}));
  // A last bucket within the limit is kept as the greedy plan made it.
  EXPECT_EQ(plan_buckets(specs({10, 10, 10}), 40, 1000, 80).back().tensors, (std::vector<std::size_t>{1, 0}));
}

TEST(BucketPlan, OversizeTensorGetsItsOwnBucketAndZeroSizeIsKept) {
  const auto plan = plan_buckets(specs({10, 5000, 0, 10}), 100, 100, 100);
  std::vector<std::size_t> seen;
  for (const auto& b : plan) {
    for (auto t : b.tensors) seen.push_back(t);
    if (std::find(b.tensors.begin(), b.tensors.end(), 1u) != b.tensors.end()) EXPECT_EQ(b.tensors.size(), 1u);
  }
  EXPECT_EQ(seen.size(), 4u);
}

TEST(BucketPlan, DtypesAreNeverMixedInOneBucket) {
  auto s = specs({10, 10, 10});
  s[1].dtype = DType::kFloat64;
  for (const auto& b : plan_buckets(s, 1 << 20, 1 << 20, 1 << 20))
    for (auto t : b.tensors) EXPECT_EQ(s[t].dtype, b.dtype);
}

// Unequal sizes, so that a slip between a tensor's index in the list and its slot in the bucket shows:
// 4-byte elements of 12, 28, 8, 20 and 44 B. Launch order 4 | 3 2 1 0 (first bucket 48 B, then 1000 B);
// the last bucket (68 B) exceeds 40 B: its tail 1 0 (28 + 12 = 40 B) goes alone, 3 2 stay.
TEST(BucketPlan, SplitOfUnequalTensorsKeepsEachTensorsOwnSizeAndOffset) {
  const auto plan = plan_buckets(specs({3, 7, 2, 5, 11}), 48, 1000, 40);
  ASSERT_EQ(plan.size(), 3u);
  EXPECT_EQ(plan[0].tensors, (std::vector<std::size_t>{4}));
  EXPECT_EQ(plan[1].tensors, (std::vector<std::size_t>{3, 2}));
  EXPECT_EQ(plan[2].tensors, (std::vector<std::size_t>{1, 0}));
  EXPECT_EQ(plan[1].offsets, (std::vector<std::int64_t>{0, 5}));
  EXPECT_EQ(plan[2].offsets, (std::vector<std::int64_t>{0, 7}));
  EXPECT_EQ(plan[1].numel, 7);
  EXPECT_EQ(plan[2].numel, 10);
  // One byte less and only tensor 0 (12 B) fits the tail; 28 B would pass it.
  const auto tighter = plan_buckets(specs({3, 7, 2, 5, 11}), 48, 1000, 39);
  ASSERT_EQ(tighter.size(), 3u);
  EXPECT_EQ(tighter[1].tensors, (std::vector<std::size_t>{3, 2, 1})) << "the tail took a tensor over last_bytes";
  EXPECT_EQ(tighter[1].offsets, (std::vector<std::int64_t>{0, 5, 7}));
  EXPECT_EQ(tighter[2].tensors, (std::vector<std::size_t>{0}));
  // A last bucket of exactly last_bytes (68 B) is within the limit and stays whole.
  EXPECT_EQ(plan_buckets(specs({3, 7, 2, 5, 11}), 48, 1000, 68).back().tensors,
            (std::vector<std::size_t>{3, 2, 1, 0}));
  // The tail never takes the whole bucket: a bucket of one small and one big tensor leaves the big one.
  const auto lopsided = plan_buckets(specs({1, 100, 50}), 200, 1000, 8);
  ASSERT_EQ(lopsided.size(), 3u);
  EXPECT_EQ(lopsided[1].tensors, (std::vector<std::size_t>{1}));
  EXPECT_EQ(lopsided[2].tensors, (std::vector<std::size_t>{0}));
}

// The plan the header describes, built here from its words for single-dtype lists: greedy buckets in
// reverse registration order (first_bytes, then bucket_bytes; an oversize tensor alone), then a last
// bucket of several tensors over last_bytes loses its longest tail within last_bytes that leaves at least
// one tensor ahead of it.
std::vector<std::vector<std::size_t>> described_plan(const std::vector<std::int64_t>& sizes, std::size_t first,
                                                     std::size_t bucket, std::size_t last) {
  std::vector<std::vector<std::size_t>> plan(1);
  std::size_t bytes = 0;
  for (std::size_t k = sizes.size(); k-- > 0;) {
    const std::size_t b = static_cast<std::size_t>(sizes[k]) * 4;
    if (!plan.back().empty() && bytes + b > (plan.size() == 1 ? first : bucket)) plan.emplace_back(), bytes = 0;
    plan.back().push_back(k);
    bytes += b;
  }
  if (plan.size() < 2 || plan.back().size() < 2 || bytes <= last) return plan;
  std::vector<std::size_t> head = plan.back(), tail;
  std::size_t tail_bytes = 0;
  while (head.size() > 1 && tail_bytes + static_cast<std::size_t>(sizes[head.back()]) * 4 <= last) {
    tail_bytes += static_cast<std::size_t>(sizes[head.back()]) * 4;
    tail.insert(tail.begin(), head.back());
    head.pop_back();
  }
  if (tail.empty()) return plan;
  plan.back() = head;
  plan.push_back(tail);
  return plan;
}

std::string listed(const std::vector<std::size_t>& tensors) {
  std::string out;
  for (auto t : tensors) out += (out.empty() ? "" : " ") + std::to_string(t);
  return "[" + out + "]";
}

// What is wrong with the plan of `sizes`, or "": its buckets against the described plan, and each bucket's
// offsets against the prefix sums of its own tensors' sizes.
std::string plan_problem(const std::vector<std::int64_t>& sizes, std::size_t first, std::size_t bucket,
                         std::size_t last) {
  const auto plan = plan_buckets(specs(sizes), first, bucket, last);
  const auto described = described_plan(sizes, first, bucket, last);
  if (plan.size() != described.size()) return cat(plan.size(), " buckets, described ", described.size());
  for (std::size_t b = 0; b < plan.size(); ++b) {
    const auto& p = plan[b];
    if (p.tensors != described[b])
      return cat("bucket ", b, " holds tensors ", listed(p.tensors), ", described ", listed(described[b]));
    if (p.offsets.size() != p.tensors.size()) return cat("bucket ", b, " has ", p.offsets.size(), " offsets");
    std::int64_t at = 0;
    for (std::size_t s = 0; s < p.tensors.size(); ++s) {
      if (p.offsets[s] != at) return cat("bucket ", b, " slot ", s, " at offset ", p.offsets[s], ", prefix sum ", at);
      at += sizes[p.tensors[s]];
    }
    if (p.numel != at) return cat("bucket ", b, " numel ", p.numel, ", its tensors hold ", at);
  }
  return "";
}

TEST(BucketPlan, UnequalTensorListsFollowThePlanRules) {
  std::uint64_t state = 12345;
  auto next = [&state](std::uint64_t range) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return (state >> 33) % range;
  };
  std::string first_problem;
  int problems = 0, splits = 0;
  for (int trial = 0; trial < 400; ++trial) {
    std::vector<std::int64_t> sizes(2 + next(9));
    for (auto& s : sizes) s = 1 + static_cast<std::int64_t>(next(40));
    const std::size_t first = 4 * (1 + next(60)), bucket = 4 * (1 + next(120)), last = 4 * (1 + next(50));
    const std::string p = plan_problem(sizes, first, bucket, last);
    if (!p.empty() && problems++ == 0)
      first_problem = cat("trial ", trial, " (limits ", first, "/", bucket, "/", last, " B): ", p);
    splits += described_plan(sizes, first, bucket, last).size() > described_plan(sizes, first, bucket, SIZE_MAX).size();
  }
  EXPECT_GT(splits, 40) << "too few lists exercise the split of the last bucket";
  EXPECT_EQ(problems, 0) << first_problem;
}

TEST(Negotiation, MismatchNamesTensorAndRanks) {
  auto a = specs({10, 20});
  auto b = a;
  b[1].shape = {21};
  try {
    check_same_tensors({describe_all(a), describe_all(a), describe_all(b)});
    FAIL() << "mismatch not detected";
  } catch (const Error& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("t1 float32 [20]' on ranks 0,1"), std::string::npos) << msg;
    EXPECT_NE(msg.find("t1 float32 [21]' on rank 2"), std::string::npos) << msg;
  }
  auto shorter = a;
  shorter.pop_back();
  try {
    check_same_tensors({describe_all(a), describe_all(shorter)});
    FAIL() << "missing tensor not detected";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("'(no tensor)' on rank 1"), std::string::npos) << e.what();
  }
  EXPECT_NO_THROW(check_same_tensors({describe_all(a), describe_all(a)}));
}

}  // namespace
}  // namespace ft
