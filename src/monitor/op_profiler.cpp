// The operator profiler's window: prepareProfiler (warm-up), enableProfiler (record operators with input
// shapes and memory), disableProfiler and save the Chrome trace atomically, on CPU and CUDA activities.
#include "monitor/op_profiler.h"

#include <torch/csrc/autograd/profiler_kineto.h>

#include <cstdio>
#include <set>

#include "io/atomic_file.h"
#include "runtime/error.h"

namespace ft {
namespace {

namespace prof = torch::autograd::profiler;
namespace impl = torch::profiler::impl;

impl::ProfilerConfig kineto_config() {
  return impl::ProfilerConfig(impl::ProfilerState::KINETO, /*report_input_shapes=*/true, /*profile_memory=*/true);
}

std::set<impl::ActivityType> activities(bool cuda) {
  std::set<impl::ActivityType> kinds = {impl::ActivityType::CPU};
  if (cuda) kinds.insert(impl::ActivityType::CUDA);
  return kinds;
}

// LibTorch's Kineto profiler: prepareProfiler, enableProfiler, and disableProfiler with or without saving.
class KinetoCalls final : public ProfilerCalls {
 public:
  explicit KinetoCalls(bool cuda) : cuda_(cuda) {}
  void prepare() override { prof::prepareProfiler(kineto_config(), activities(cuda_)); }
  void record() override { prof::enableProfiler(kineto_config(), activities(cuda_)); }
  void save(const std::string& path) override {
    std::unique_ptr<prof::ProfilerResult> result = prof::disableProfiler();
    FT_REQUIRE(result, "profile.trace ", path, ": the profiler returned no result");
    AtomicFile out(path);
    result->save(out.temp_path());
    out.commit();
  }
  void discard() override { prof::disableProfiler(); }

 private:
  bool cuda_;
};

}  // namespace

std::string profile_trace_path(const std::string& trace, int rank, int cycle) {
  if (trace.empty() || (rank == 0 && cycle <= 1)) return trace;
  const std::size_t slash = trace.rfind('/');
  const std::size_t dot = trace.rfind('.');
  const bool has_ext = dot != std::string::npos && (slash == std::string::npos || dot > slash + 1);
  const std::string stem = has_ext ? trace.substr(0, dot) : trace;
  return cat(stem, rank > 0 ? cat(".rank", rank) : std::string(), cycle > 1 ? cat(".cycle", cycle) : std::string(),
             has_ext ? trace.substr(dot) : std::string());
}

std::unique_ptr<ProfilerCalls> kineto_profiler_calls(bool cuda) { return std::make_unique<KinetoCalls>(cuda); }

long profile_prepare_step(const ProfileConfig& config, bool cuda) { return cuda ? 0 : config.wait; }

OpProfiler::OpProfiler(const ProfileConfig& config, int rank, bool cuda)
    : OpProfiler(config, rank, cuda, kineto_profiler_calls(cuda)) {}

OpProfiler::OpProfiler(const ProfileConfig& config, int rank, bool cuda, std::unique_ptr<ProfilerCalls> calls)
    : config_(config),
      path_(profile_trace_path(config.trace, rank)),
      rank_(rank),
      prepare_at_(profile_prepare_step(config, cuda)),
      calls_(std::move(calls)) {
  FT_REQUIRE(config.wait >= 0 && config.warmup >= 0 && config.active >= 1 && config.repeat >= 1, "profile: wait ",
             config.wait, " and warmup ", config.warmup, " must be >= 0, active ", config.active, " and repeat ",
             config.repeat, " >= 1");
  if (enabled()) {
    const std::size_t slash = path_.rfind('/');
    const std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/" : path_.substr(0, slash);
    try {
      ensure_writable_directory(dir);
    } catch (const std::exception& e) {
      throw Error(cat("profile.trace ", path_, " cannot be written: ", e.what()));
    }
  }
  if (enabled()) begin_cycle();
}

// A cycle whose preparation (or recording) falls on its step 0 starts it at once.
void OpProfiler::begin_cycle() {
  steps_ = 0;
  state_ = State::kWaiting;
  advance();
}

OpProfiler::~OpProfiler() {
  try {
    finish();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "warning: operator profile %s not written: %s\n", path_.c_str(), e.what());
  }
}

// Moves through the cycle's states as far as its step count allows: prepared, recording, saved.
void OpProfiler::advance() {
  const long record_at = static_cast<long>(config_.wait) + config_.warmup, save_at = record_at + config_.active;
  if (state_ == State::kWaiting && steps_ >= prepare_at_) calls_->prepare(), state_ = State::kWarmingUp;
  if (state_ == State::kWarmingUp && steps_ >= record_at) calls_->record(), state_ = State::kRecording;
  if (state_ == State::kRecording && steps_ >= save_at) {
    save();
    if (cycle_ < config_.repeat) ++cycle_, begin_cycle();
  }
}

void OpProfiler::save() {
  state_ = State::kDone;
  calls_->save(profile_trace_path(config_.trace, rank_, cycle_));
  written_ = true;
}

void OpProfiler::step() {
  if (!enabled() || state_ == State::kDone) return;
  ++steps_;
  advance();
}

std::string OpProfiler::finish() {
  if (!enabled()) return "";
  if (state_ == State::kRecording) save();
  if (state_ == State::kWarmingUp) calls_->discard();  // warming up, never recording: nothing to keep
  state_ = State::kDone;
  return written_ ? path_ : "";
}

}  // namespace ft
