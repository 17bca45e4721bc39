// Event files made from finished runs' results files (`fusetrain report --tensorboard`): one folder per
// run holding the per-epoch figures under the tags a live run logs, so runs of a sweep compare in TensorBoard.
#pragma once

#include <string>

#include "results/run_record.h"

namespace ft {

// A run's folder that already holds event files is refused (ft::Error naming it) unless `force`: TensorBoard
// would draw the earlier files and the new one as one run.
void check_events_folder(const std::string& folder, bool force);
// Writes <folder>/events.out.tfevents.<run start>.<host>, removing event files already there: the resolved
// config as text at step 0, and at the optimizer step that ended each epoch its global and per-rank figures
// (epoch_scalars.h), the last with rank 0's peak memory. Returns the file's path; throws ft::Error naming it.
std::string write_run_events(const RunRecord& run, const std::string& folder);

}  // namespace ft
