// The project's own blocking CUDA calls (stream, event and device synchronisation, blocking copies), each
// shown first to the host-sync check, which sees ATen's own blocking calls but not raw CUDA ones.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdio>

#include "runtime/error.h"

#ifdef FUSETRAIN_WITH_CUDA
#include "kernels/cuda_check.h"
#endif

namespace ft {

// What the check asks of a blocking call: nothing, a warning, or an error (ATen's sync-debug modes).
enum class HostSyncMode { kOff, kWarn, kError };

// The answer to one blocking call `what` under `mode`: throws under kError, with the words of ATen's own
// check, warns once per process under kWarn.
inline void host_sync_verdict(HostSyncMode mode, const char* what) {
  if (mode == HostSyncMode::kError) throw Error(cat("called a synchronizing CUDA operation: ", what));
  static std::atomic<bool> warned{false};
  if (mode == HostSyncMode::kWarn && !warned.exchange(true))
    std::fprintf(stderr, "warning: called a synchronizing CUDA operation: %s\n", what);
}

// Where the check's state is read: a program that links LibTorch installs its reader (the sync-debug mode
// of c10::cuda::warning_state, which FUSETRAIN_TEST_SYNC_DEBUG sets inside a step); none means off.
using HostSyncModeReader = HostSyncMode (*)();
inline std::atomic<HostSyncModeReader>& host_sync_mode_reader() {
  static std::atomic<HostSyncModeReader> reader{nullptr};
  return reader;
}

// Before every blocking call: the check's verdict on it.
inline void check_host_sync(const char* what) {
  const HostSyncModeReader reader = host_sync_mode_reader().load();
  if (reader != nullptr) host_sync_verdict(reader(), what);
}

#ifdef FUSETRAIN_WITH_CUDA
inline void sync_stream(cudaStream_t stream) {
  check_host_sync("cudaStreamSynchronize");
  FT_CHECK_CUDA(cudaStreamSynchronize(stream));
}

inline void sync_event(cudaEvent_t event) {
  check_host_sync("cudaEventSynchronize");
  FT_CHECK_CUDA(cudaEventSynchronize(event));
}

inline void sync_device() {
  check_host_sync("cudaDeviceSynchronize");
  FT_CHECK_CUDA(cudaDeviceSynchronize());
}

// cudaMemcpy: returns once the copy is done, so it waits for the work queued before it.
inline void copy_blocking(void* dst, const void* src, std::size_t bytes, cudaMemcpyKind kind) {
  check_host_sync("cudaMemcpy");
  FT_CHECK_CUDA(cudaMemcpy(dst, src, bytes, kind));
}
#endif

}  // namespace ft
