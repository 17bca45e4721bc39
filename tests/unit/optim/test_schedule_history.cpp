// Tests of learning-rate schedules and of the history judgements (overfitting onset, early stopping).
#include <gtest/gtest.h>

#include "history/history.h"
#include "optim/scheduler.h"

namespace ft {
namespace {

TEST(Schedule, WarmupThenCosineToFloor) {
  SchedulerConfig c;
  c.name = SchedulerName::cosine;
  c.warmup_epochs = 1;
  c.warmup_start = 0.1;
  c.min_lr = 0.001;
  const LearningRateSchedule s(c, 0.1, 10, 5);
  EXPECT_NEAR(s.at(0), 0.01, 1e-12);
  EXPECT_NEAR(s.at(5), 0.055, 1e-12);
  EXPECT_NEAR(s.at(10), 0.1, 1e-12);
  EXPECT_NEAR(s.at(49), 0.001, 1e-12);
  EXPECT_GT(s.at(20), s.at(30));
}

TEST(Schedule, StepDecayAndOneCycle) {
  SchedulerConfig step;
  step.name = SchedulerName::step;
  step.step_size = 2;
  step.gamma = 0.5;
  const LearningRateSchedule s(step, 1.0, 10, 6);
  EXPECT_DOUBLE_EQ(s.at(0), 1.0);
  EXPECT_DOUBLE_EQ(s.at(19), 1.0);
  EXPECT_DOUBLE_EQ(s.at(20), 0.5);
  EXPECT_DOUBLE_EQ(s.at(45), 0.25);
  SchedulerConfig one;
  one.name = SchedulerName::onecycle;
  one.pct_start = 0.25;
  one.warmup_start = 0.04;
  const LearningRateSchedule o(one, 1.0, 10, 4);
  EXPECT_NEAR(o.at(0), 0.04, 1e-12);
  EXPECT_NEAR(o.at(10), 1.0, 1e-12);
  EXPECT_NEAR(o.at(39), 0.0, 1e-12);
}

// The fast CIFAR-10 shape: from 0.2 x lr up to lr over 23% of the steps, then straight down to the floor.
TEST(Schedule, LinearRiseAndFall) {
  SchedulerConfig c;
  c.name = SchedulerName::linear;
  c.pct_start = 0.25;
  c.warmup_start = 0.2;
  c.min_lr = 0.07;
  const LearningRateSchedule s(c, 1.0, 10, 4);  // 40 steps, 10 rising
  EXPECT_NEAR(s.at(0), 0.2, 1e-12);
  EXPECT_NEAR(s.at(5), 0.6, 1e-12);
  EXPECT_NEAR(s.at(10), 1.0, 1e-12);
  EXPECT_NEAR(s.at(24), 1.0 - 0.93 * (14.0 / 29), 1e-12);  // 14 of the 29 falling steps
  EXPECT_NEAR(s.at(39), 0.07, 1e-12);
}

std::vector<EpochRecord> history(const std::vector<std::pair<double, double>>& losses) {
  std::vector<EpochRecord> out;
  int epoch = 0;
  for (const auto& [train, test] : losses) {
    EpochRecord r;
    r.epoch = ++epoch;
    r.train_loss = train;
    r.test_loss = test;
    r.evaluated = true;
    out.push_back(r);
  }
  return out;
}

TEST(History, OverfittingOnsetNeedsAFullWindow) {
  const auto h = history({{2.0, 2.0}, {1.5, 1.6}, {1.0, 1.4}, {0.8, 1.5}, {0.6, 1.7}, {0.4, 1.9}});
  EXPECT_EQ(overfitting_onset(h, 3), 4);
  EXPECT_EQ(overfitting_onset(h, 4), 0);
  EXPECT_EQ(overfitting_onset(history({{1, 1}, {0.9, 0.9}, {0.8, 0.8}}), 1), 0);
}

TEST(History, EarlyStoppingPatience) {
  const auto h = history({{2, 2.0}, {1, 1.0}, {0.9, 1.1}, {0.8, 1.2}});
  EXPECT_TRUE(should_stop_early(h, 2));
  EXPECT_FALSE(should_stop_early(h, 3));
  EXPECT_FALSE(should_stop_early(h, 0));
}

}  // namespace
}  // namespace ft
