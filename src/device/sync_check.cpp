// The synchronisation check through LibTorch's own switch (c10::cuda::warning_state), which every blocking
// copy, .item() and stream synchronisation of ATen consults; the variable is read once per process.
#include "device/sync_check.h"

#include <cstdlib>

#ifdef FUSETRAIN_WITH_CUDA
#include <c10/cuda/CUDAFunctions.h>
#endif

namespace ft {
namespace {

bool requested() {
  static const bool on = std::getenv("FUSETRAIN_TEST_SYNC_DEBUG") != nullptr;
  return on;
}

}  // namespace

StepSyncCheck::StepSyncCheck(const at::Device& device, std::int64_t step) {
#ifdef FUSETRAIN_WITH_CUDA
  active_ = device.is_cuda() && step > 0 && requested();
  if (active_) c10::cuda::warning_state().set_sync_debug_mode(c10::cuda::SyncDebugMode::L_ERROR);
#else
  (void)device, (void)step, (void)requested;
#endif
}

StepSyncCheck::~StepSyncCheck() {
#ifdef FUSETRAIN_WITH_CUDA
  if (active_) c10::cuda::warning_state().set_sync_debug_mode(c10::cuda::SyncDebugMode::L_DISABLED);
#endif
}

}  // namespace ft
