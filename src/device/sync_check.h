// A test aid for the asynchronous GPU step: with FUSETRAIN_TEST_SYNC_DEBUG=1 a CUDA run's steps after its
// first run under CUDA's synchronisation debug mode set to error, so a host synchronisation inside one fails.
#pragma once

#include <ATen/Device.h>

#include <cstdint>

namespace ft {

// Active for its lifetime on a CUDA device, from the run's second optimizer step on (the first may time
// cuDNN's algorithms), when FUSETRAIN_TEST_SYNC_DEBUG is set; a no-op otherwise and on the CPU.
class StepSyncCheck {
 public:
  StepSyncCheck(const at::Device& device, std::int64_t step);
  ~StepSyncCheck();
  StepSyncCheck(const StepSyncCheck&) = delete;
  StepSyncCheck& operator=(const StepSyncCheck&) = delete;

 private:
  bool active_ = false;
};

}  // namespace ft
