// The project's own blocking CUDA calls under the host-sync check, on any machine: the check's verdict per
// mode, and (in a CUDA build) the wrappers of kernels/host_sync.h refusing before they call CUDA while c10's
// sync-debug mode, which FUSETRAIN_TEST_SYNC_DEBUG sets inside a step, says error.
#include <gtest/gtest.h>

#include <string>

#include "kernels/host_sync.h"
#include "monitor/host_sync_guard.h"

#ifdef FUSETRAIN_WITH_CUDA
#include <c10/cuda/CUDAFunctions.h>
#endif

namespace ft {
namespace {

std::string error_of(void (*call)()) {
  try {
    call();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

TEST(HostSyncGuard, TheVerdictFailsOnlyUnderError) {
  EXPECT_NO_THROW(host_sync_verdict(HostSyncMode::kOff, "cudaMemcpy"));
  EXPECT_NO_THROW(host_sync_verdict(HostSyncMode::kWarn, "cudaMemcpy"));
  try {
    host_sync_verdict(HostSyncMode::kError, "cudaMemcpy");
    ADD_FAILURE() << "no error under kError";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), "called a synchronizing CUDA operation: cudaMemcpy")
        << "the words of ATen's own check, which the no_host_sync case looks for";
  }
}

// A stand-in reader: check_host_sync asks it before every blocking call, and no reader means no check.
HostSyncMode g_mode = HostSyncMode::kOff;
HostSyncMode stand_in_mode() { return g_mode; }

TEST(HostSyncGuard, BlockingCallsAskTheInstalledReader) {
  const HostSyncModeReader before = host_sync_mode_reader().exchange(nullptr);
  EXPECT_NO_THROW(check_host_sync("cudaStreamSynchronize")) << "no reader installed";
  host_sync_mode_reader().store(stand_in_mode);
  g_mode = HostSyncMode::kError;
  EXPECT_EQ(error_of([] { check_host_sync("cudaStreamSynchronize"); }),
            "called a synchronizing CUDA operation: cudaStreamSynchronize");
  g_mode = HostSyncMode::kOff;
  EXPECT_NO_THROW(check_host_sync("cudaStreamSynchronize"));
  host_sync_mode_reader().store(before);
}

#ifdef FUSETRAIN_WITH_CUDA
// c10's sync-debug mode set to error for its lifetime, as StepSyncCheck does inside a step.
struct SyncDebugError {
  SyncDebugError() { c10::cuda::warning_state().set_sync_debug_mode(c10::cuda::SyncDebugMode::L_ERROR); }
  ~SyncDebugError() { c10::cuda::warning_state().set_sync_debug_mode(c10::cuda::SyncDebugMode::L_DISABLED); }
};

// The installed guard reads c10's state; the wrappers refuse before calling CUDA, so this holds on a
// machine without a GPU too (a CUDA call there would fail with another error).
TEST(HostSyncGuard, TheWrappersRefuseInsideAStepUnderTheCheck) {
  install_host_sync_guard();
  EXPECT_EQ(torch_sync_debug_mode(), HostSyncMode::kOff);
  SyncDebugError inside_a_step;
  EXPECT_EQ(torch_sync_debug_mode(), HostSyncMode::kError);
  const char* refusal = "called a synchronizing CUDA operation: ";
  EXPECT_EQ(error_of([] { sync_stream(nullptr); }), std::string(refusal) + "cudaStreamSynchronize");
  EXPECT_EQ(error_of([] { sync_event(nullptr); }), std::string(refusal) + "cudaEventSynchronize");
  EXPECT_EQ(error_of([] { sync_device(); }), std::string(refusal) + "cudaDeviceSynchronize");
  EXPECT_EQ(error_of([] {
              char byte = 0;
              copy_blocking(&byte, &byte, 1, cudaMemcpyHostToHost);
            }),
            std::string(refusal) + "cudaMemcpy");
}
#endif

}  // namespace
}  // namespace ft
