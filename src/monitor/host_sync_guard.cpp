// The reader of c10's sync-debug mode for kernels/host_sync.h: LibTorch's switch that every blocking copy,
// .item() and stream synchronisation of ATen consults, so one setting checks both kinds of call.
#include "monitor/host_sync_guard.h"

#ifdef FUSETRAIN_WITH_CUDA
#include <c10/cuda/CUDAFunctions.h>
#endif

namespace ft {

HostSyncMode torch_sync_debug_mode() {
#ifdef FUSETRAIN_WITH_CUDA
  switch (c10::cuda::warning_state().get_sync_debug_mode()) {
    case c10::cuda::SyncDebugMode::L_ERROR:
      return HostSyncMode::kError;
    case c10::cuda::SyncDebugMode::L_WARN:
      return HostSyncMode::kWarn;
    case c10::cuda::SyncDebugMode::L_DISABLED:
      return HostSyncMode::kOff;
  }
#endif
  return HostSyncMode::kOff;
}

void install_host_sync_guard() { host_sync_mode_reader().store(torch_sync_debug_mode); }

}  // namespace ft
