// The step's test aids, their variables parsed once per process; a malformed value is an error naming the
// variable, so a test cannot pass because its aid was silently ignored.
#include "train/step_test_aids.h"

#include <torch/optim/optimizer.h>

#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>

#include "runtime/error.h"
#include "checkpoint/finite_state.h"

namespace ft {
namespace {

struct Planted {
  std::int64_t nan_step = -1;
  bool nan_in_optimizer = false;
  bool host_read = false;
};

Planted read_environment() {
  Planted p;
  if (const char* read = std::getenv("FUSETRAIN_TEST_HOST_READ_IN_STEP")) {
    FT_REQUIRE(std::strcmp(read, "1") == 0 || std::strcmp(read, "0") == 0,
               "FUSETRAIN_TEST_HOST_READ_IN_STEP must be 1 or 0, got '", read, "'");
    p.host_read = std::strcmp(read, "1") == 0;
  }
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

StepTestAids::StepTestAids() {
  static const Planted planted = read_environment();
  nan_step_ = planted.nan_step;
  nan_in_optimizer_ = planted.nan_in_optimizer;
  host_read_ = planted.host_read;
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
