// The test aids that reach a training step, all through this one seam: the host-synchronisation check around
// the step, a planted host read inside it (the check's positive control), a planted NaN after it, a rank
// lost or held up on its device before it and a rank slowed in its forward (a straggler).
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

class Backend;

class StepTestAids {
 public:
  // From the environment, read once per process: FUSETRAIN_TEST_SYNC_DEBUG (see train/sync_check.h),
  // FUSETRAIN_TEST_HOST_READ_IN_STEP=1, FUSETRAIN_TEST_NAN_AFTER_STEP=N[:optimizer], FUSETRAIN_TEST_PEER_LOST=R@N,
  // FUSETRAIN_TEST_DEVICE_HOLD=R@N:S and FUSETRAIN_TEST_SLOW_RANK=R:MS or R:xF. None set: no effect. `rank`: this
  // process's rank.
  explicit StepTestAids(int rank);

  // Before the step that follows `steps_done` steps. FUSETRAIN_TEST_PEER_LOST=R@N: once N steps are done, rank R
  // freezes (SIGSTOP: it answers nothing more, as a lost node does, while the launcher still counts it alive)
  // and every other rank's next collective on `backend` fails with the asynchronous error NCCL reports for a
  // peer that is gone (ncclRemoteError), as a GPU run would see it.
  // FUSETRAIN_TEST_DEVICE_HOLD=R@N:S: once N steps are done, rank R's device (its current CUDA stream) is held
  // busy for S seconds, as a straggling GPU would be.
  void before_step(std::int64_t steps_done, int rank, Backend& backend, const at::Device& device) const;

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
  int lost_rank_ = -1;
  std::int64_t lost_after_ = -1;
  int held_rank_ = -1;
  std::int64_t held_after_ = -1;
  double held_s_ = 0;
  double slow_ms_ = 0, slow_factor_ = 1;  // this rank's sleep in each forward: fixed, or as a factor
};

}  // namespace ft
