// The devices the CUDA runtime shows this process, each with the UUID of the physical device behind it
// (or the FUSETRAIN_TEST_GPUS stand-in, a test aid); with cuda_kernels_built(), the build's own answer
// to "can this process use CUDA".
#pragma once

#include <string>

#include "kernels/device_query.h"
#include "runtime/device_query.h"

namespace ft {

// The devices this process sees, asked once: the stand-in when FUSETRAIN_TEST_GPUS is set, else the CUDA
// runtime (none in a build without CUDA, or where the runtime finds no driver or device).
const DeviceQuery& visible_devices();

// Why the CUDA runtime could not list its devices (a broken or mismatched driver: cudaGetDeviceCount's
// error), "" when it could or when there simply are none. FUSETRAIN_TEST_CUDA_FAILURE="text" stands in for
// such a failure (a test aid, as FUSETRAIN_TEST_GPUS is for the device list).
const std::string& device_query_failure();
constexpr const char* kTestCudaFailureVariable = "FUSETRAIN_TEST_CUDA_FAILURE";

}  // namespace ft
