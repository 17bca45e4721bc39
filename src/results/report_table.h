// Tables across runs from results files: the coursework's columns (batch and global batch, ranks,
// backend, precision, times and their forward/backward/communication split, images/s, memory, GPU model
// and utilisation, accuracies, overfitting) plus any config key, as markdown or CSV.
#pragma once

#include <string>
#include <vector>

#include "results/run_record.h"

namespace ft {

struct ReportOptions {
  std::vector<std::string> extra_keys;  // config keys shown as extra columns, e.g. optimizer.name
  std::string sort_by;                  // a column name or config key; "" keeps the input order
  std::string group_by;                 // a column name or config key: one table per value (CSV: a column)
  bool csv = false;
};

std::string report_table(const std::vector<RunRecord>& runs, const ReportOptions& options);

// Value of a dotted config key in a run's stored YAML ("" when absent).
std::string config_value(const RunRecord& run, const std::string& key);

// Images per optimizer step over all ranks: batch_size x ranks x train.accumulation_steps.
long long global_batch(const RunRecord& run);

}  // namespace ft
