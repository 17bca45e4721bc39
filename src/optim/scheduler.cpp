// Schedule arithmetic. Warm-up is counted in steps (fractional epochs allowed); the decay phase of
// cosine, one-cycle and linear spans the remaining steps so that the last step reaches min_lr; linear_decay
// falls from the first step towards min_lr, which it would reach one step after the last.
#include "optim/scheduler.h"

#include <algorithm>
#include <cmath>

namespace ft {

LearningRateSchedule::LearningRateSchedule(const SchedulerConfig& config, double base_lr,
                                           std::int64_t steps_per_epoch, int epochs, std::int64_t total_steps)
    : c_(config), base_(base_lr), per_epoch_(std::max<std::int64_t>(1, steps_per_epoch)),
      total_(total_steps > 0 ? total_steps : per_epoch_ * epochs),
      warmup_(static_cast<std::int64_t>(std::llround(config.warmup_epochs * per_epoch_))) {}

double LearningRateSchedule::at(std::int64_t step) const {
  constexpr double kPi = 3.14159265358979323846;
  if (c_.name == SchedulerName::linear_decay) {
    const double left = 1.0 - static_cast<double>(std::min(step, total_)) / static_cast<double>(total_);
    return c_.min_lr + (base_ - c_.min_lr) * left;
  }
  if (c_.name == SchedulerName::onecycle || c_.name == SchedulerName::linear) {
    const auto rise = std::max<std::int64_t>(1, static_cast<std::int64_t>(c_.pct_start * total_));
    const double start = base_ * c_.warmup_start;
    if (step < rise) return start + (base_ - start) * static_cast<double>(step) / rise;
    const double t = std::min(1.0, static_cast<double>(step - rise) / std::max<std::int64_t>(1, total_ - rise - 1));
    if (c_.name == SchedulerName::linear) return base_ + (c_.min_lr - base_) * t;
    return c_.min_lr + (base_ - c_.min_lr) * 0.5 * (1 + std::cos(kPi * t));
  }
  if (step < warmup_) {
    const double start = base_ * c_.warmup_start;
    return start + (base_ - start) * static_cast<double>(step) / warmup_;
  }
  if (c_.name == SchedulerName::step) return base_ * std::pow(c_.gamma, static_cast<double>(step / per_epoch_ / c_.step_size));
  if (c_.name == SchedulerName::cosine) {
    const double t = std::min(1.0, static_cast<double>(step - warmup_) / std::max<std::int64_t>(1, total_ - warmup_ - 1));
    return c_.min_lr + (base_ - c_.min_lr) * 0.5 * (1 + std::cos(kPi * t));
  }
  return base_;
}

}  // namespace ft
