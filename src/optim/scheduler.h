// Learning-rate schedules as pure functions of the optimizer step: linear warm-up followed by
// constant, step decay, cosine annealing, one-cycle, rise-and-fall or a straight fall.
#pragma once

#include <cstdint>

#include "config/schema.h"

namespace ft {

class LearningRateSchedule {
 public:
  // The schedule spans `epochs` x `steps_per_epoch` optimizer steps, or `total_steps` when above 0
  // (train.max_steps: a run that ends mid-epoch).
  LearningRateSchedule(const SchedulerConfig& config, double base_lr, std::int64_t steps_per_epoch,
                       int epochs, std::int64_t total_steps = 0);
  // Learning rate for optimizer step `step` (0-based, counting optimizer steps, not micro-batches).
  double at(std::int64_t step) const;
  double base() const { return base_; }
  std::int64_t steps_per_epoch() const { return per_epoch_; }

 private:
  SchedulerConfig c_;
  double base_;
  std::int64_t per_epoch_, total_, warmup_;
};

}  // namespace ft
