// Every step of every learning-rate schedule against its formula: the warm-up of constant, step and cosine
// schedules, the rise of one-cycle and linear, and the decay after them, for whole and fractional epochs.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "runtime/error.h"
#include "optim/scheduler.h"

namespace ft {
namespace {

constexpr double kPi = 3.14159265358979323846;
constexpr double kLr = 0.4, kStart = 0.1, kFloor = 0.004;  // base rate, warmup_start, min_lr

struct Shape {
  std::int64_t per_epoch;
  int epochs;
  double fraction;        // warmup_epochs (warm-up schedules) or pct_start (rising schedules)
  std::int64_t expected;  // steps of warm-up or rise, worked out by hand from the line above
};

// Warm-up epochs to steps round to the nearest step (4.5 -> 5, 3.5 -> 4, 1.2 -> 1).
const std::vector<Shape> kWarmups = {{10, 5, 1.0, 10}, {7, 4, 0.5, 4}, {3, 6, 1.5, 5}, {4, 3, 0.3, 1},
                                     {6, 3, 2.0, 12},  {5, 2, 0.0, 0}};
// The rise is pct_start of all steps, rounded down, at least one (6.3 -> 6, 0.5 -> 1).
const std::vector<Shape> kRises = {{10, 4, 0.25, 10}, {7, 3, 0.3, 6}, {5, 1, 0.1, 1}, {6, 5, 0.5, 15}, {9, 2, 0.9, 16}};

SchedulerConfig config(SchedulerName name, double fraction) {
  SchedulerConfig c;
  c.name = name;
  c.warmup_start = kStart;
  c.min_lr = kFloor;
  c.step_size = 2;
  c.gamma = 0.5;
  if (name == SchedulerName::onecycle || name == SchedulerName::linear)
    c.pct_start = fraction;
  else
    c.warmup_epochs = fraction;
  return c;
}

// From kStart x kLr at step 0 towards kLr, reached at step `steps` (which belongs to the next phase).
double climbing(std::int64_t step, std::int64_t steps) {
  return kLr * kStart + (kLr - kLr * kStart) * static_cast<double>(step) / static_cast<double>(steps);
}

// The share of the decay done at `step`: 0 on the first step after the warm-up or rise, 1 on the last step
// of the run (and after it).
double decayed(std::int64_t step, std::int64_t begin, std::int64_t total) {
  const double span = static_cast<double>(std::max<std::int64_t>(1, total - begin - 1));
  return std::min(1.0, static_cast<double>(step - begin) / span);
}

double cosine_between(double high, double low, double t) { return low + (high - low) * (1 + std::cos(kPi * t)) / 2; }

double expected_rate(SchedulerName name, const Shape& s, std::int64_t step) {
  const std::int64_t total = s.per_epoch * s.epochs;
  switch (name) {
    case SchedulerName::onecycle:
      return step < s.expected ? climbing(step, s.expected)
                               : cosine_between(kLr, kFloor, decayed(step, s.expected, total));
    case SchedulerName::linear:
      return step < s.expected ? climbing(step, s.expected) : kLr + (kFloor - kLr) * decayed(step, s.expected, total);
    default: break;
  }
  if (step < s.expected) return climbing(step, s.expected);
  if (name == SchedulerName::step) return kLr * std::pow(0.5, static_cast<double>((step / s.per_epoch) / 2));
  if (name == SchedulerName::cosine) return cosine_between(kLr, kFloor, decayed(step, s.expected, total));
  return kLr;
}

// Every step of the run and three past its end; the first few differing steps name what went wrong.
void expect_every_step(SchedulerName name, const Shape& s) {
  const LearningRateSchedule schedule(config(name, s.fraction), kLr, s.per_epoch, s.epochs);
  const std::int64_t total = s.per_epoch * s.epochs;
  std::string wrong;
  int count = 0;
  for (std::int64_t step = 0; step < total + 3; ++step) {
    const double want = expected_rate(name, s, step), got = schedule.at(step);
    if (std::abs(got - want) <= 1e-12) continue;
    if (++count <= 6) wrong += cat("\n  step ", step, ": ", got, ", formula ", want);
  }
  EXPECT_EQ(count, 0) << choice_name(name) << " over " << s.epochs << " epochs of " << s.per_epoch
                      << " steps, warm-up/rise " << s.fraction << " (" << s.expected << " steps): " << count
                      << " steps off" << wrong;
}

TEST(ScheduleSteps, WarmupOfConstantStepAndCosineFollowsItsFormulaEveryStep) {
  for (auto name : {SchedulerName::none, SchedulerName::step, SchedulerName::cosine})
    for (const auto& s : kWarmups) expect_every_step(name, s);
}

TEST(ScheduleSteps, RiseAndDecayOfOneCycleAndLinearFollowTheirFormulaEveryStep) {
  for (auto name : {SchedulerName::onecycle, SchedulerName::linear})
    for (const auto& s : kRises) expect_every_step(name, s);
}

// The phase boundaries on their own: the warm-up's last step is still below the base rate, the next one is
// the base rate; the rise ends the same way; the run's last step is the floor.
TEST(ScheduleSteps, WarmupAndRiseEndOnTheRightStep) {
  for (auto name : {SchedulerName::none, SchedulerName::cosine}) {
    const LearningRateSchedule s(config(name, 1.0), kLr, 10, 5);
    EXPECT_NEAR(s.at(9), kLr * (kStart + (1 - kStart) * 0.9), 1e-12) << choice_name(name) << ": warm-up ended early";
    EXPECT_NEAR(s.at(10), kLr, 1e-12) << choice_name(name) << ": warm-up did not end at step 10";
  }
  for (auto name : {SchedulerName::onecycle, SchedulerName::linear}) {
    const LearningRateSchedule s(config(name, 0.25), kLr, 10, 4);
    EXPECT_NEAR(s.at(9), kLr * (kStart + (1 - kStart) * 0.9), 1e-12) << choice_name(name) << ": rise ended early";
    EXPECT_NEAR(s.at(10), kLr, 1e-12) << choice_name(name) << ": rise did not peak at step 10";
    EXPECT_NEAR(s.at(39), kFloor, 1e-12) << choice_name(name) << ": the last step is not the floor";
    EXPECT_LT(s.at(38), s.at(37)) << choice_name(name) << ": still falling before the last step";
  }
}

// train.max_steps: the schedule spans the steps given, not whole epochs. airbench94's 476 steps of 48 an epoch:
// the rise is int(0.23 x 476) = 109 steps, the last step (475) is the floor, and every step follows the formula
// over that span; a span of exactly the epochs' steps is the epochs' schedule.
TEST(ScheduleSteps, MaxStepsSpanReplacesTheEpochs) {
  const LearningRateSchedule cut(config(SchedulerName::linear, 0.23), kLr, 48, 10, 476);
  EXPECT_NEAR(cut.at(108), climbing(108, 109), 1e-12);
  EXPECT_NEAR(cut.at(109), kLr, 1e-12);
  EXPECT_NEAR(cut.at(475), kFloor, 1e-12);
  EXPECT_GT(cut.at(474), kFloor);
  for (std::int64_t step = 109; step < 476; ++step)
    EXPECT_NEAR(cut.at(step), kLr + (kFloor - kLr) * decayed(step, 109, 476), 1e-12) << "step " << step;
  const LearningRateSchedule cosine(config(SchedulerName::cosine, 1.0), kLr, 48, 10, 476);
  EXPECT_NEAR(cosine.at(475), kFloor, 1e-12);
  EXPECT_GT(cosine.at(474), kFloor);
  const LearningRateSchedule whole(config(SchedulerName::linear, 0.23), kLr, 48, 10, 480), plain(config(SchedulerName::linear, 0.23), kLr, 48, 10);
  for (std::int64_t step = 0; step < 483; ++step) EXPECT_EQ(whole.at(step), plain.at(step)) << "step " << step;
}

// linear_decay falls from the base rate at step 0 straight towards min_lr, which it would reach one step after
// the last (airbench94_muon's lr x (1 - step / steps)): 8 epochs of 25 steps, worked out by hand.
TEST(ScheduleSteps, LinearDecayFallsFromTheFirstStep) {
  SchedulerConfig c;
  c.name = SchedulerName::linear_decay;
  c.warmup_epochs = 2;  // no warm-up: it is not a warm-up schedule
  const LearningRateSchedule plain(c, 0.24, 25, 8);
  EXPECT_DOUBLE_EQ(plain.at(0), 0.24);
  EXPECT_DOUBLE_EQ(plain.at(1), 0.24 * 199.0 / 200.0);
  EXPECT_DOUBLE_EQ(plain.at(100), 0.12);
  EXPECT_NEAR(plain.at(199), 0.24 / 200.0, 1e-17);
  EXPECT_DOUBLE_EQ(plain.at(200), 0.0);
  EXPECT_DOUBLE_EQ(plain.at(250), 0.0);  // past the end: the floor, never below
  c.min_lr = 0.04;
  const LearningRateSchedule floored(c, 0.24, 25, 8);
  EXPECT_DOUBLE_EQ(floored.at(0), 0.24);
  EXPECT_DOUBLE_EQ(floored.at(100), 0.14);
  EXPECT_DOUBLE_EQ(floored.at(200), 0.04);
  EXPECT_DOUBLE_EQ(floored.base(), 0.24);
  EXPECT_EQ(floored.steps_per_epoch(), 25);
}

}  // namespace
}  // namespace ft
