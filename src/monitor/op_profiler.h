// Per-operator profiling of a window of optimizer steps through LibTorch's Kineto profiler: `wait` steps
// untouched, `warmup` steps traced and thrown away, `active` steps saved as a Chrome trace with memory.
#pragma once

#include <memory>
#include <string>

#include "config/schema.h"

namespace torch::autograd::profiler {
struct ProfilerResult;
}

namespace ft {

// The trace path of `rank`: the configured path on rank 0, "<stem>.rank<R><ext>" on the others.
std::string profile_trace_path(const std::string& trace, int rank);

// Call step() once after every optimizer step. The profiler is prepared after `wait` steps, records
// from step wait+warmup and writes the trace after wait+warmup+active steps (or, when the run ends
// inside the window, from the destructor or finish()). Off when `config.trace` is empty. One per process.
class OpProfiler {
 public:
  OpProfiler(const ProfileConfig& config, int rank, bool cuda);
  ~OpProfiler();
  OpProfiler(const OpProfiler&) = delete;
  OpProfiler& operator=(const OpProfiler&) = delete;

  void step();
  // Stops a window still open and writes what it recorded; returns the trace path ("" when none).
  std::string finish();
  bool enabled() const { return !path_.empty(); }
  bool written() const { return written_; }
  const std::string& path() const { return path_; }

 private:
  enum class State { kWaiting, kWarmingUp, kRecording, kDone };
  void prepare();
  void record();
  void save();

  ProfileConfig config_;
  std::string path_;
  bool cuda_ = false;
  long steps_ = 0;
  State state_ = State::kWaiting;
  bool written_ = false;
};

}  // namespace ft
