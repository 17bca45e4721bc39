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

// The calls OpProfiler makes into LibTorch's Kineto profiler (a test stands in for them).
struct ProfilerCalls {
  virtual ~ProfilerCalls() = default;
  virtual void prepare() = 0;                      // attach (CUPTI on a device) and warm up; nothing kept
  virtual void record() = 0;                       // keep what runs from now on
  virtual void save(const std::string& path) = 0;  // detach, writing what was kept to `path`
  virtual void discard() = 0;                      // detach, keeping nothing
};
std::unique_ptr<ProfilerCalls> kineto_profiler_calls(bool cuda);

// The step of a cycle after which the profiler is prepared: `wait` on the CPU; 0 (as the cycle begins) on a
// CUDA device, so that CUPTI is attached before train.cuda_graphs captures its step (the step after the first
// eager ones): attaching it after a capture is a known way to crash or to record nothing of the replays.
long profile_prepare_step(const ProfileConfig& config, bool cuda);

// Call step() once after every optimizer step. Each of `repeat` cycles prepares the profiler after
// profile_prepare_step() steps, records from step wait+warmup and writes its trace after wait+warmup+active
// steps (or, when the run ends inside the window, from the destructor or finish()); the next cycle then
// begins. Off when `config.trace` is empty. One per process.
class OpProfiler {
 public:
  OpProfiler(const ProfileConfig& config, int rank, bool cuda);
  OpProfiler(const ProfileConfig& config, int rank, bool cuda, std::unique_ptr<ProfilerCalls> calls);
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
  void advance();
  void save();
  void begin_cycle();

  ProfileConfig config_;
  std::string path_;
  int rank_ = 0;
  long prepare_at_ = 0;  // profile_prepare_step()
  std::unique_ptr<ProfilerCalls> calls_;
  long steps_ = 0;   // steps of the current cycle
  int cycle_ = 1;    // 1-based
  State state_ = State::kWaiting;
  bool written_ = false;
};

}  // namespace ft
