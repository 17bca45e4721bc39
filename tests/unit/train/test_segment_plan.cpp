// Planning a segment: a fresh start keeps the configured batch; a resume on another number of ranks
// re-splits the first segment's global batch, continues at the saved place in the epoch's order, and
// explains itself; a resume on the same world says nothing.
#include <gtest/gtest.h>

#include "train/segment_plan.h"

namespace ft {
namespace {

SegmentRecord world(int ranks) {
  SegmentRecord s;
  s.world_size = ranks;
  return s;
}

Config config(int batch) {
  Config c;
  c.data.batch_size = batch;
  c.data.shuffle = Shuffle::global;
  return c;
}

// A checkpoint written by a 2-rank segment of 2 x 16 images per step, 10 steps into epoch 2.
TrainingPosition saved_at_step_10() {
  TrainingPosition p;
  p.epoch = 2;
  p.step = 10;
  p.sample = 320;
  p.reference_batch = 32;
  SegmentRecord first = world(2);
  first.global_batch = 32;
  p.segments = {first};
  return p;
}

TEST(SegmentPlan, FreshStartKeepsTheConfiguredBatch) {
  const auto plan = plan_segment(config(16), world(2), nullptr);
  EXPECT_EQ(plan.reference_batch, 32);
  EXPECT_EQ(plan.segment.segment, 1);
  EXPECT_EQ(plan.segment.per_rank_batch, 16);
  EXPECT_EQ(plan.segment.start_epoch, 1);
  EXPECT_TRUE(plan.notes.empty());
}

TEST(SegmentPlan, ResumeOnOneRankAccumulatesAndGoesOnAtTheSameImage) {
  const auto saved = saved_at_step_10();
  const auto plan = plan_segment(config(16), world(1), &saved);
  EXPECT_EQ(plan.segment.segment, 2);
  EXPECT_EQ(plan.layout.per_rank_batch, 16);
  EXPECT_EQ(plan.layout.accumulation, 2);
  EXPECT_EQ(plan.segment.start_epoch, 2);
  EXPECT_EQ(plan.segment.start_step, 10);
  EXPECT_EQ(plan.segment.start_sample, 320);
  ASSERT_EQ(plan.notes.size(), 1u);
  EXPECT_EQ(plan.notes[0], "resuming on 1 rank (the checkpoint was written on 2 ranks): elastic.batch global keeps 32 "
                           "images per step: 1 rank x 16 x 2 accumulation steps (learning rate unchanged)");
  const Config c = segment_config(config(16), plan);
  EXPECT_EQ(c.data.batch_size, 16);
  EXPECT_EQ(c.train.accumulation_steps, 2);
}

TEST(SegmentPlan, LocalRuleScalesTheRateAndRoundsThePlaceDownToAStep) {
  auto cfg = config(16);
  cfg.elastic.batch = ElasticBatch::local;
  auto saved = saved_at_step_10();
  saved.sample = 352;  // 11 steps of 32: not a whole number of 64-image steps
  const auto plan = plan_segment(cfg, world(4), &saved);
  EXPECT_EQ(plan.layout.global_batch, 64);
  EXPECT_DOUBLE_EQ(plan.layout.lr_factor, 2.0);
  EXPECT_EQ(plan.segment.start_step, 5);
  EXPECT_EQ(plan.segment.start_sample, 320);
  ASSERT_EQ(plan.notes.size(), 2u);
  EXPECT_NE(plan.notes[1].find("goes on from image 320"), std::string::npos) << plan.notes[1];
  EXPECT_DOUBLE_EQ(segment_config(cfg, plan).optimizer.lr, 2 * cfg.optimizer.lr);
}

TEST(SegmentPlan, LocalShuffleSaysTheRestOfTheEpochIsDealtAnew) {
  auto cfg = config(16);
  cfg.data.shuffle = Shuffle::local;
  const auto saved = saved_at_step_10();
  const auto plan = plan_segment(cfg, world(4), &saved);
  ASSERT_EQ(plan.notes.size(), 2u);
  EXPECT_NE(plan.notes[1].find("data.shuffle local"), std::string::npos) << plan.notes[1];
}

// Stopped at an epoch's start (image 0 of its order): on another world the batch is explained, the order is not.
TEST(SegmentPlan, ResumeAtAnEpochsStartSaysNothingOfItsOrder) {
  auto cfg = config(16);
  cfg.data.shuffle = Shuffle::local;
  auto saved = saved_at_step_10();
  saved.epoch = 3;
  saved.step = 0;
  saved.sample = 0;
  const auto plan = plan_segment(cfg, world(4), &saved);
  EXPECT_EQ(plan.segment.start_epoch, 3);
  EXPECT_EQ(plan.segment.start_step, 0);
  ASSERT_EQ(plan.notes.size(), 1u);
  EXPECT_NE(plan.notes[0].find("resuming on 4 ranks"), std::string::npos) << plan.notes[0];
}

// Stopped one 32-image step into the epoch, resumed with 64-image steps: less than one new step was done, so
// the epoch goes on from image 0 at step 0, and both notes say so.
TEST(SegmentPlan, ResumeLessThanOneNewStepIntoTheEpochStartsItAgain) {
  auto cfg = config(16);
  cfg.elastic.batch = ElasticBatch::local;
  cfg.data.shuffle = Shuffle::local;
  auto saved = saved_at_step_10();
  saved.step = 1;
  saved.sample = 32;
  const auto plan = plan_segment(cfg, world(4), &saved);
  EXPECT_EQ(plan.segment.start_step, 0);
  EXPECT_EQ(plan.segment.start_sample, 0);
  ASSERT_EQ(plan.notes.size(), 3u);
  EXPECT_NE(plan.notes[1].find("data.shuffle local"), std::string::npos) << plan.notes[1];
  EXPECT_NE(plan.notes[2].find("goes on from image 0 of its global order (the stop was at 32;"), std::string::npos)
      << plan.notes[2];
}

TEST(SegmentPlan, SameWorldResumesQuietly) {
  const auto saved = saved_at_step_10();
  const auto plan = plan_segment(config(16), world(2), &saved);
  EXPECT_EQ(plan.segment.start_step, 10);
  EXPECT_TRUE(plan.notes.empty());
}

// distributed.reproducible: micro_batches micro-batches of data.batch_size whatever the number of ranks,
// each rank taking its share as accumulation steps; a number of ranks that does not divide it is refused.
TEST(SegmentPlan, ReproducibleKeepsItsMicroBatchesOnAnyDivisor) {
  Config c = config(16);
  c.distributed.reproducible = true;
  c.distributed.micro_batches = 8;
  for (int ranks : {1, 2, 4, 8}) {
    const auto plan = plan_segment(c, world(ranks), nullptr);
    EXPECT_EQ(plan.layout.per_rank_batch, 16) << ranks;
    EXPECT_EQ(plan.layout.accumulation, 8 / ranks) << ranks;
    EXPECT_EQ(plan.layout.global_batch, 128) << ranks;
    EXPECT_EQ(plan.layout.lr_factor, 1.0) << ranks;
    // What the checkpoint keeps as the first segment's global batch: 8 micro-batches of 16 images.
    EXPECT_EQ(plan.reference_batch, 128) << ranks;
  }
  try {
    plan_segment(c, world(3), nullptr);
    FAIL() << "8 micro-batches were split over 3 ranks";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("distributed.micro_batches 8 cannot be split over 3 ranks"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace ft
