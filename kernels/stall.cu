// The stall kernel: one thread sleeping in short __nanosleep steps until the device's global timer has
// advanced by the requested time (globaltimer counts nanoseconds on every GPU since Pascal).

#include "kernels/cuda_check.h"
#include "kernels/stall.h"

namespace ft {
namespace {

// ---- kernels ----

__device__ unsigned long long global_ns() {
  unsigned long long ns;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(ns));
  return ns;
}

__global__ void stall_kernel(unsigned long long nanoseconds) {
  const unsigned long long start = global_ns();
  while (global_ns() - start < nanoseconds) __nanosleep(100000);
}

}  // namespace

// ---- launchers ----

void stall_stream_device(double seconds, cudaStream_t stream) {
  stall_kernel<<<1, 1, 0, stream>>>(static_cast<unsigned long long>(seconds * 1e9));
  FT_CHECK_LAUNCH();
}

}  // namespace ft
