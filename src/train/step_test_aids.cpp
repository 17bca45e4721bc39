// The step's test aids, their variables parsed once per process; a malformed value is an error naming the
// variable, so a test cannot pass because its aid was silently ignored.
#include "train/step_test_aids.h"

#include <ATen/DeviceAccelerator.h>
#include <torch/optim/optimizer.h>

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>
#include <thread>

#include "comm/backend.h"
#include "kernels/stall.h"
#include "runtime/error.h"
#include "checkpoint/finite_state.h"

namespace ft {
namespace {

struct Planted {
  std::int64_t nan_step = -1;
  bool nan_in_optimizer = false;
  bool host_read = false;
  int lost_rank = -1;
  std::int64_t lost_after = -1;
  int held_rank = -1;
  std::int64_t held_after = -1;
  double held_s = 0;
  int slow_rank = -1;
  double slow_ms = 0, slow_factor = 1;
};

// "R@N" at the start of `text` (rank R >= 0, N >= 0 steps); the rest of the text in `rest`. false when malformed.
bool rank_at_step(const char* text, int& rank, std::int64_t& steps, const char*& rest) {
  char* end = nullptr;
  const long r = std::strtol(text, &end, 10);
  if (end == text || *end != '@' || r < 0) return false;
  const char* at = end + 1;
  steps = std::strtoll(at, &end, 10);
  rank = static_cast<int>(r);
  rest = end;
  return end != at && steps >= 0;
}

// FUSETRAIN_TEST_PEER_LOST=R@N and FUSETRAIN_TEST_DEVICE_HOLD=R@N:S (S > 0 seconds).
void read_rank_aids(Planted& p) {
  const char* rest = nullptr;
  if (const char* text = std::getenv("FUSETRAIN_TEST_PEER_LOST"))
    FT_REQUIRE(rank_at_step(text, p.lost_rank, p.lost_after, rest) && *rest == '\0',
               "FUSETRAIN_TEST_PEER_LOST must be R@N (rank R lost once N steps are done), got '", text, "'");
  if (const char* text = std::getenv("FUSETRAIN_TEST_DEVICE_HOLD")) {
    const bool well_formed = rank_at_step(text, p.held_rank, p.held_after, rest) && *rest == ':';
    char* end = nullptr;
    if (well_formed) p.held_s = std::strtod(rest + 1, &end);
    FT_REQUIRE(well_formed && end != rest + 1 && *end == '\0' && p.held_s > 0, "FUSETRAIN_TEST_DEVICE_HOLD must be "
               "R@N:S (rank R's device held S seconds once N steps are done), got '", text, "'");
  }
}

// FUSETRAIN_TEST_SLOW_RANK=R:MS (milliseconds) or R:xF (a factor above 1 on the forward's time), R a rank.
void read_slow_rank(Planted& p) {
  const char* text = std::getenv("FUSETRAIN_TEST_SLOW_RANK");
  if (!text) return;
  char* end = nullptr;
  p.slow_rank = static_cast<int>(std::strtol(text, &end, 10));
  const bool rank_ok = end != text && *end == ':' && p.slow_rank >= 0;
  const bool factor = rank_ok && end[1] == 'x';
  const char* value = rank_ok ? end + 1 + factor : text;
  const double amount = std::strtod(value, &end);
  FT_REQUIRE(rank_ok && end != value && *end == '\0' && amount > (factor ? 1 : 0), "FUSETRAIN_TEST_SLOW_RANK must be ",
             "R:MS (milliseconds above 0) or R:xF (a factor above 1) with R a rank, got '", text, "'");
  (factor ? p.slow_factor : p.slow_ms) = amount;
}

Planted read_environment() {
  Planted p;
  if (const char* read = std::getenv("FUSETRAIN_TEST_HOST_READ_IN_STEP")) {
    FT_REQUIRE(std::strcmp(read, "1") == 0 || std::strcmp(read, "0") == 0,
               "FUSETRAIN_TEST_HOST_READ_IN_STEP must be 1 or 0, got '", read, "'");
    p.host_read = std::strcmp(read, "1") == 0;
  }
  read_rank_aids(p);
  read_slow_rank(p);
  const char* text = std::getenv("FUSETRAIN_TEST_NAN_AFTER_STEP");
  if (!text) return p;
  char* end = nullptr;
  p.nan_step = std::strtoll(text, &end, 10);
  p.nan_in_optimizer = std::strcmp(end, ":optimizer") == 0;
  FT_REQUIRE(p.nan_step > 0 && (*end == '\0' || p.nan_in_optimizer), "FUSETRAIN_TEST_NAN_AFTER_STEP must be N or ",
             "N:optimizer with N a positive step count, got '", text, "'");
  return p;
}

}  // namespace

StepTestAids::StepTestAids(int rank) {
  static const Planted planted = read_environment();
  nan_step_ = planted.nan_step;
  nan_in_optimizer_ = planted.nan_in_optimizer;
  host_read_ = planted.host_read;
  lost_rank_ = planted.lost_rank;
  lost_after_ = planted.lost_after;
  held_rank_ = planted.held_rank;
  held_after_ = planted.held_after;
  held_s_ = planted.held_s;
  if (rank != planted.slow_rank) return;
  slow_ms_ = planted.slow_ms;
  slow_factor_ = planted.slow_factor;
}

void StepTestAids::before_step(std::int64_t steps_done, int rank, Backend& backend, const at::Device& device) const {
  if (steps_done == held_after_ && rank == held_rank_) {
    FT_REQUIRE(device.is_cuda(), "FUSETRAIN_TEST_DEVICE_HOLD holds a CUDA device, and rank ", rank, " trains on ", device);
    const c10::Stream stream = at::accelerator::getCurrentStream(device.index());
    stall_stream_device(held_s_, static_cast<cudaStream_t>(stream.native_handle()));
  }
  if (steps_done != lost_after_) return;
  if (rank == lost_rank_) {
    std::raise(SIGSTOP);  // until the job ends it
    return;
  }
  constexpr int kNcclRemoteError = 6;  // ncclResult_t's ncclRemoteError
  backend.plant_transport_failure(nccl_transport_failure(kNcclRemoteError));
}

void StepTestAids::forward(const std::function<void()>& run) const {
  const auto start = std::chrono::steady_clock::now();
  run();
  const std::chrono::duration<double, std::milli> took = std::chrono::steady_clock::now() - start;
  const double sleep_ms = slow_ms_ + (slow_factor_ - 1) * took.count();
  if (sleep_ms > 0) std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(sleep_ms));
}

void StepTestAids::after_step(std::int64_t steps_done, Network& network, torch::optim::Optimizer& optimizer,
                              const at::Tensor& loss_sum) const {
  if (host_read_ && steps_done > 1) (void)loss_sum.item<double>();
  if (steps_done != nan_step_) return;
  at::NoGradGuard no_grad;
  const NamedTensors state = saved_state(network, nan_in_optimizer_ ? &optimizer : nullptr, {});
  for (const auto& [name, t] : state) {
    if (!t.is_floating_point() || (nan_in_optimizer_ && name.rfind("optimizer.", 0) != 0)) continue;
    t.as_strided({1}, {1}).fill_(std::numeric_limits<double>::quiet_NaN());  // the first element in memory
    return;
  }
}

}  // namespace ft
