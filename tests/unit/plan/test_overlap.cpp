// Tests of plan/overlap.cpp against schedules worked out by hand: buckets in plan order on one stream, each
// starting when it is ready and the one before it is done.
#include "plan/overlap.h"

#include <gtest/gtest.h>

namespace ft {
namespace {

TEST(Overlap, OneStreamInPlanOrder) {
  // Ready at 10, 20, 30 ms, taking 15, 5, 5: they run 10-25, 25-30, 30-35; backward ends at 30.
  const Overlap o = simulate_overlap({0.010, 0.020, 0.030}, {0.015, 0.005, 0.005}, 0.030);
  EXPECT_DOUBLE_EQ(o.comm_s, 0.025);
  EXPECT_DOUBLE_EQ(o.finish_s, 0.035);
  EXPECT_NEAR(o.exposed_s, 0.005, 1e-15);
}

TEST(Overlap, AStreamThatIdlesWaitsForTheNextBucket) {
  // 0-1 ms, idle, then 20-21 ms: finished before backward's end at 25 ms.
  const Overlap o = simulate_overlap({0.0, 0.020}, {0.001, 0.001}, 0.025);
  EXPECT_DOUBLE_EQ(o.finish_s, 0.021);
  EXPECT_EQ(o.exposed_s, 0);
}

TEST(Overlap, EndingExactlyWithBackwardExposesNothing) {
  const Overlap o = simulate_overlap({0.010}, {0.015}, 0.025);
  EXPECT_EQ(o.exposed_s, 0);
}

TEST(Overlap, ABucketReadyBeforeTheOneAheadStillWaitsItsTurn) {
  // Bucket 1 is ready at 5 ms but bucket 0 only at 20: plan order holds it until 20 + 10.
  const Overlap o = simulate_overlap({0.020, 0.005}, {0.010, 0.010}, 0.020);
  EXPECT_DOUBLE_EQ(o.finish_s, 0.040);
  EXPECT_DOUBLE_EQ(o.exposed_s, 0.020);
}

// Beside compute: one bucket taking 10 ms alone and 20 ms beside compute, backward ending at 30 ms.
TEST(Overlap, BesideComputeABucketThatEndsBeforeBackwardTakesItsPaceBeside) {
  const Overlap o = simulate_overlap({0.005}, {0.010}, 0.030, {0.020});
  EXPECT_DOUBLE_EQ(o.finish_s, 0.025);
  EXPECT_DOUBLE_EQ(o.comm_s, 0.020);
  EXPECT_EQ(o.exposed_s, 0);
}

TEST(Overlap, BesideComputeEndingExactlyWithBackwardIsAllAtThePaceBeside) {
  const Overlap o = simulate_overlap({0.010}, {0.010}, 0.030, {0.020});
  EXPECT_DOUBLE_EQ(o.finish_s, 0.030);
  EXPECT_EQ(o.exposed_s, 0);
}

TEST(Overlap, BesideComputeABucketAcrossBackwardsEndFinishesAtItsOwnPace) {
  // Started at 20 ms: by 30 ms half its work is done (10 of 20 ms beside), the other half takes 5 ms alone.
  const Overlap o = simulate_overlap({0.020}, {0.010}, 0.030, {0.020});
  EXPECT_NEAR(o.finish_s, 0.035, 1e-15);
  EXPECT_NEAR(o.exposed_s, 0.005, 1e-15);
  EXPECT_NEAR(o.comm_s, 0.015, 1e-15);
}

TEST(Overlap, BesideComputeABucketStartedAtOrAfterBackwardsEndTakesItsOwnTime) {
  EXPECT_DOUBLE_EQ(simulate_overlap({0.030}, {0.010}, 0.030, {0.020}).finish_s, 0.040);
  EXPECT_DOUBLE_EQ(simulate_overlap({0.035}, {0.010}, 0.030, {0.020}).finish_s, 0.045);
}

TEST(Overlap, BesideComputeTheSlowerPaceDelaysTheBucketsBehind) {
  // Bucket 0: 0-20 ms beside compute (10 alone); bucket 1, ready at 5 ms, starts at 20: 5 of its 10 ms beside
  // by 25 ms is half, the rest 2.5 ms alone: ends at 27.5; backward ends at 25.
  const Overlap o = simulate_overlap({0.0, 0.005}, {0.010, 0.005}, 0.025, {0.020, 0.010});
  EXPECT_NEAR(o.finish_s, 0.0275, 1e-15);
  EXPECT_NEAR(o.exposed_s, 0.0025, 1e-15);
}

TEST(Overlap, BesideComputeNeedsOnePacePerBucket) {
  EXPECT_THROW(simulate_overlap({0.0, 0.005}, {0.010, 0.005}, 0.025, {0.020}), std::exception);
}

TEST(Overlap, NeedsOneReadyTimePerBucket) {
  EXPECT_THROW(simulate_overlap({0.0}, {0.010, 0.005}, 0.025), std::exception);
  EXPECT_THROW(simulate_overlap({}, {0.010}, 0.025), std::exception);
}

TEST(Overlap, NoBucketsNothingToWaitFor) {
  const Overlap o = simulate_overlap({}, {}, 0.5);
  EXPECT_EQ(o.comm_s, 0);
  EXPECT_EQ(o.exposed_s, 0);
}

}  // namespace
}  // namespace ft
