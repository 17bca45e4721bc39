// Tests of fusion planning and of the start-up negotiation: bucket limits, reverse order, the smaller
// first and last buckets, oversize tensors, and mismatch messages that name the tensor and the ranks.
#include <gtest/gtest.h>

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
