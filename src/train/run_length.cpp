// The run's length in epochs and steps, from train.epochs or train.max_steps.
#include "train/run_length.h"

#include <algorithm>

#include "runtime/error.h"

namespace ft {

RunLength RunLength::of(const TrainConfig& train, std::int64_t steps_per_epoch) {
  FT_CHECK(steps_per_epoch > 0, "an epoch of ", steps_per_epoch, " steps");
  RunLength length;
  length.steps_per_epoch = steps_per_epoch;
  if (train.max_steps > 0) {
    length.total_steps = train.max_steps;
    length.epochs = static_cast<int>((train.max_steps + steps_per_epoch - 1) / steps_per_epoch);
  } else {
    length.total_steps = steps_per_epoch * train.epochs;
    length.epochs = train.epochs;
  }
  return length;
}

std::int64_t RunLength::steps_in(int epoch) const {
  const std::int64_t before = static_cast<std::int64_t>(epoch - 1) * steps_per_epoch;
  return std::clamp<std::int64_t>(total_steps - before, 0, steps_per_epoch);
}

}  // namespace ft
