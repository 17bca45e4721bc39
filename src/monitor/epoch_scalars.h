// The per-epoch figures as TensorBoard scalars: one set of tags for a run's live event file and for the
// event files `fusetrain report --tensorboard` makes of results files, so the two compare in TensorBoard.
#pragma once

#include <vector>

#include "monitor/tensorboard_events.h"
#include "results/run_record.h"

namespace ft {

// epoch/number, epoch/train_loss, epoch/train_acc, epoch/lr, epoch/time_s, epoch/images_per_s and, when the
// epoch was evaluated, epoch/test_loss and epoch/test_acc: the global figures the epoch line prints
// (accuracies as fractions in [0, 1]).
std::vector<Scalar> epoch_scalars(const EpochRecord& record);
// rank<R>/train_loss, rank<R>/train_acc, rank<R>/test_loss, rank<R>/test_acc: each rank's own figures of
// `epoch` (the "Rank R, Epoch [...]" lines), from the rows of that epoch in `rows`.
std::vector<Scalar> rank_scalars(const std::vector<RankEpochRecord>& rows, int epoch);
// memory/peak_mib and memory/peak_allocated_mib: a rank's peak reserved and allocated device memory, in MiB.
std::vector<Scalar> memory_scalars(double peak_bytes, double peak_allocated_bytes);

}  // namespace ft
