// The test aids that reach a training step, all through this one seam: the host-synchronisation check around
// the step, a planted host read inside it (the check's positive control), a planted NaN after it and a rank
// slowed in its forward (a straggler).
#pragma once

#include <ATen/ATen.h>

#include <cstdint>
#include <functional>

#include "models/network.h"
#include "device/sync_check.h"

namespace torch::optim {
class Optimizer;
}

namespace ft {

class StepTestAids {
 public:
  // From the environment, read once per process: FUSETRAIN_TEST_SYNC_DEBUG (see train/sync_check.h),
  // FUSETRAIN_TEST_HOST_READ_IN_STEP=1, FUSETRAIN_TEST_NAN_AFTER_STEP=N[:optimizer] and
  // FUSETRAIN_TEST_SLOW_RANK=R:MS or R:xF. None set: no effect. `rank`: this process's rank.
  explicit StepTestAids(int rank);

  // For the whole of optimizer step `global_step` (0-based): the host-synchronisation check.
  StepSyncCheck watch(const at::Device& device, std::int64_t global_step) const {
    return StepSyncCheck(device, global_step);
  }
  // After the step's own work, still inside the check. FUSETRAIN_TEST_HOST_READ_IN_STEP: every step after the
  // first reads `loss_sum` on the host (a device synchronisation the check must catch).
  // FUSETRAIN_TEST_NAN_AFTER_STEP=N: once step N is done, a NaN in the first weight (or, with ":optimizer", the
  // first optimizer state tensor), on every rank.
  void after_step(std::int64_t steps_done, Network& network, torch::optim::Optimizer& optimizer,
                  const at::Tensor& loss_sum) const;
  // Runs a forward pass. FUSETRAIN_TEST_SLOW_RANK=R:MS: rank R then sleeps MS milliseconds; R:xF: F - 1 times
  // the forward's own time, so that its forward takes F times as long whatever else runs on the machine.
  void forward(const std::function<void()>& run) const;

 private:
  std::int64_t nan_step_ = -1;
  bool nan_in_optimizer_ = false;
  bool host_read_ = false;
  double slow_ms_ = 0, slow_factor_ = 1;  // this rank's sleep in each forward: fixed, or as a factor
};

}  // namespace ft
