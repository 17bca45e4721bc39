// The devices the CUDA runtime shows this process, each with the UUID of the physical device behind it
// (or the FUSETRAIN_TEST_GPUS stand-in, a test aid); with cuda_kernels_built(), the build's own answer
// to "can this process use CUDA".
#pragma once

#include "kernels/device_query.h"
#include "runtime/device_query.h"

namespace ft {

// The devices this process sees, asked once: the stand-in when FUSETRAIN_TEST_GPUS is set, else the CUDA
// runtime (none in a build without CUDA, or where the runtime finds no driver or device).
const DeviceQuery& visible_devices();

}  // namespace ft
