// A kernel that holds a stream busy for a while: the test aid that makes a collective queued behind it
// late, as a straggling peer would, so that stall detection on the device can be checked on one GPU.
#pragma once

#include "kernels/common.h"

namespace ft {

// Enqueues on `stream` a one-thread kernel that spins for `seconds` of the GPU's clock.
void stall_stream_device(double seconds, cudaStream_t stream);

}  // namespace ft
