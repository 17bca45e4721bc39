// Judgements over the per-epoch history that every rank makes identically from global metrics:
// overfitting (test loss rising while train loss falls) and early stopping (no better test loss).
#pragma once

#include <vector>

#include "results/run_record.h"

namespace ft {

// First epoch (1-based) of the earliest window of `window` consecutive evaluated epochs in which test
// loss rose each epoch while train loss fell; 0 when there is none.
int overfitting_onset(const std::vector<EpochRecord>& epochs, int window);

// True when the last `patience` evaluated epochs brought no test loss below the best before them.
bool should_stop_early(const std::vector<EpochRecord>& epochs, int patience);

}  // namespace ft
