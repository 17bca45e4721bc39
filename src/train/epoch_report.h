// What the loop reports and judges of an epoch: the lines rank 0 prints, the digests of the state the
// results file keeps, and the errors that end a run whose loss is not finite.
#pragma once

#include <torch/optim/optimizer.h>

#include <cstdint>
#include <vector>

#include "config/schema.h"
#include "models/network.h"
#include "results/run_record.h"
#include "optim/fused_step.h"

namespace ft {

// Rank 0's line of the epoch, after every rank's own line (as a DistributedSampler run's logs read) when
// there are several ranks and the epoch was evaluated.
void print_epoch(const EpochRecord& record, const std::vector<RankEpochRecord>& rank_epochs, int epochs, int ranks);

// The digests of the weights (after any averaging of running statistics) and of the optimizer's state, the
// fused step's device counts (when `fused`) brought into that state first.
void record_digests(EpochRecord& record, Network& network, torch::optim::Optimizer& optimizer, FusedStep* fused);

// Throws on a non-finite training loss (`first_bad_step` >= 0, the first optimizer step with one).
void require_finite_loss(double first_bad_step, int epoch, Precision precision);
// Throws, the same on every rank, when an evaluated epoch's test loss is not finite: its checkpoint is not
// written.
void require_finite_test_loss(const EpochRecord& record, Precision precision);

}  // namespace ft
