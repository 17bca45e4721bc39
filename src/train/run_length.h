// How long a run trains: train.epochs whole epochs, or train.max_steps optimizer steps with the last epoch
// cut short where they end (airbench94's 9.9 epochs), and how many steps each epoch then takes.
#pragma once

#include <cstdint>

#include "config/schema.h"

namespace ft {

struct RunLength {
  std::int64_t steps_per_epoch = 1;
  std::int64_t total_steps = 1;  // the schedule's and lookahead's span
  int epochs = 1;                // the last epoch, 1-based

  // From the config and the steps of a whole epoch (> 0): max_steps > 0 gives ceil(max_steps / steps_per_epoch)
  // epochs, else train.epochs of them.
  static RunLength of(const TrainConfig& train, std::int64_t steps_per_epoch);
  // Optimizer steps of `epoch` (1-based): a whole epoch's, fewer for a last one cut short, 0 past the end.
  std::int64_t steps_in(int epoch) const;
};

}  // namespace ft
