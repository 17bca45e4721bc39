// The HDF5 results file of a run (one per run, written by rank 0, atomically) and its reader for
// reports. Layout (declared in results_fields.cpp): /config, /provenance, /epochs/<column>,
// /ranks/<column>, /rank_epochs/<column>, /utilization/<column>, /model/<column>, /summary.
#pragma once

#include <string>

#include "results/results_fields.h"
#include "results/run_record.h"

namespace ft {

void write_results(const std::string& path, const RunRecord& record);
// Throws ft::Error naming the file and the group/field that is missing or malformed.
RunRecord read_results(const std::string& path);

}  // namespace ft
