// Tables about the inside of runs: one row per rank (time split, memory, and the rank's own training
// loss and accuracy on its slice) and a model summary (layers, output shapes, parameters, totals).
#pragma once

#include <string>
#include <vector>

#include "results/run_record.h"

namespace ft {

// One row per rank of every run, markdown or CSV.
std::string per_rank_table(const std::vector<RunRecord>& runs, bool csv);

// The layers and a closing total row, as markdown.
std::string model_table(const std::vector<ModelLayer>& layers);
// Every run's model: markdown, a section per run; CSV, one table with a leading run column.
std::string model_tables(const std::vector<RunRecord>& runs, bool csv);

// Sum of the layers' parameters.
long long total_parameters(const std::vector<ModelLayer>& layers);

}  // namespace ft
