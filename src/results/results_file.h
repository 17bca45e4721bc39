// The HDF5 results file of a run (one per run, written by rank 0, atomically) and its reader for
// reports. Layout: /config, /provenance, /epochs/<column>, /ranks/<column>, /utilization, /summary.
#pragma once

#include <string>

#include "results/run_record.h"

namespace ft {

constexpr std::int64_t kResultsFormatVersion = 1;

void write_results(const std::string& path, const RunRecord& record);
RunRecord read_results(const std::string& path);

}  // namespace ft
