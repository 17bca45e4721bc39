// Per-operator profiling of windows of optimizer steps through LibTorch's Kineto profiler: `wait` steps
// untouched, `warmup` traced and thrown away, `active` saved as a Chrome trace with memory, `repeat` times.
#pragma once

#include <memory>
#include <string>

#include "config/schema.h"

namespace torch::autograd::profiler {
struct ProfilerResult;
}

namespace ft {

// The trace path of `rank`'s cycle `cycle` (1-based): the configured path on rank 0's first cycle,
// "<stem>.rank<R><ext>" on other ranks and "<stem>[.rank<R>].cycle<K><ext>" for later cycles.
std::string profile_trace_path(const std::string& trace, int rank, int cycle = 1);

// Call step() once after every optimizer step. Each of `repeat` cycles prepares the profiler after `wait`
// steps, records from step wait+warmup and writes its trace after wait+warmup+active steps (or, when the
// run ends inside the window, from the destructor or finish()); the next cycle then begins. Off when
// `config.trace` is empty. One per process.
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
  void begin_cycle();

  ProfileConfig config_;
  std::string path_;
  int rank_ = 0;
  bool cuda_ = false;
  long steps_ = 0;   // steps of the current cycle
  int cycle_ = 1;    // 1-based
  State state_ = State::kWaiting;
  bool written_ = false;
};

}  // namespace ft
