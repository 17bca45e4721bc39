// Tables about the inside of runs: one row per rank (time split, memory, and the rank's own training
// loss and accuracy on its slice), one per segment, and a model summary (layers, shapes, parameters).
#pragma once

#include <string>
#include <vector>

#include "results/run_record.h"

namespace ft {

// One row per rank of every run, markdown or CSV.
std::string per_rank_table(const std::vector<RunRecord>& runs, bool csv);

// One row per segment (start or resume) of every run: world, batch split, where it began, wall time.
std::string segment_table(const std::vector<RunRecord>& runs, bool csv);

// The layers and a closing total row, as markdown.
std::string model_table(const std::vector<ModelLayer>& layers);
// Every run's model: markdown, a section per run; CSV, one table with a leading run column.
std::string model_tables(const std::vector<RunRecord>& runs, bool csv);

// Sum of the layers' parameters.
long long total_parameters(const std::vector<ModelLayer>& layers);

}  // namespace ft
