// Lets the project's own blocking CUDA calls (kernels/host_sync.h) see the host-sync check that ATen's
// blocking calls consult: c10's sync-debug mode, set to error inside a step under FUSETRAIN_TEST_SYNC_DEBUG.
#pragma once

#include "kernels/host_sync.h"

namespace ft {

// c10::cuda::warning_state()'s sync-debug mode as the check's; kOff in a build without CUDA.
HostSyncMode torch_sync_debug_mode();

// Makes check_host_sync() read torch_sync_debug_mode(); once per program, before it runs steps.
void install_host_sync_guard();

}  // namespace ft
