// The step's test aids, their variables parsed once per process; a malformed value is an error naming the
// variable, so a test cannot pass because its aid was silently ignored.
#include "train/step_test_aids.h"

#include <torch/optim/optimizer.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>
#include <thread>

#include "runtime/error.h"
#include "checkpoint/finite_state.h"

namespace ft {
namespace {

struct Planted {
  std::int64_t nan_step = -1;
  bool nan_in_optimizer = false;
  bool host_read = false;
  int slow_rank = -1;
  double slow_ms = 0, slow_factor = 1;
};

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
  if (rank != planted.slow_rank) return;
  slow_ms_ = planted.slow_ms;
  slow_factor_ = planted.slow_factor;
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
