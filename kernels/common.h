// What every kernel file shares: host/device qualifiers, the typed stream, ceil_div and launch sizes, and
// the meaning of the launcher suffixes. Safe to include from CPU-only translation units and builds.
#pragma once

#include <cstdint>

#include "kernels/device_query.h"

#ifdef FUSETRAIN_WITH_CUDA
#include <cuda_runtime_api.h>
#else
// cudaStream_t exactly as the CUDA runtime declares it, so that declarations compile without CUDA.
struct CUstream_st;
typedef struct CUstream_st* cudaStream_t;
#endif

#ifdef __CUDACC__
#define FT_HOST_DEVICE __host__ __device__
#else
#define FT_HOST_DEVICE
#endif

// Each kernel file X has X.h (parameters and the declarations below), X.cpp (the CPU reference), X.cu
// (a kernels section, then a launchers section; compiled only in CUDA builds) and, where the CPU and the
// GPU must agree bit for bit, X_pixel.h with the per-element rule both call. Launcher suffixes:
//   X_cpu     host loop over host memory; always built.
//   X_device  kernel launch over device memory, asynchronous on `stream` (null = default stream).
//   X_staged  host memory in and out, converted on the GPU (copy in, launch, copy out, synchronise).
// In builds without CUDA the _device and _staged functions throw the error of cuda_not_built().
namespace ft {

template <typename T>
FT_HOST_DEVICE constexpr T ceil_div(T a, T b) {
  return (a + b - 1) / b;
}

constexpr int kThreadsPerBlock = 256;
// Grid-stride kernels launch at most this many blocks: enough to fill any current GPU many times over.
constexpr std::int64_t kMaxGridBlocks = 65535;
// The hardware limits of a grid's x and of its y and z dimensions.
constexpr std::int64_t kMaxGridX = 0x7fffffff;
constexpr std::int64_t kMaxGridYZ = 65535;

// Blocks for a grid-stride loop over `work` elements with kThreadsPerBlock threads each.
inline int grid_blocks(std::int64_t work) {
  const std::int64_t wanted = ceil_div<std::int64_t>(work, kThreadsPerBlock);
  return static_cast<int>(wanted < kMaxGridBlocks ? wanted : kMaxGridBlocks);
}

// Whether a kernel may index a map of `elements` in 32 bits (unsigned): every offset, and a grid-stride loop's last
// step past the end (at most kMaxGridBlocks x kThreadsPerBlock), stays below 2^32.
inline bool fits_32_bit_index(std::int64_t elements) { return elements < (std::int64_t{1} << 31); }

// The element type of a kernel's maps on the device.
enum class MapType : std::uint8_t { f32, f16, bf16 };

// Throws the one error of builds without CUDA: names `what` and the settings that avoid it.
[[noreturn]] void cuda_not_built(const char* what);

}  // namespace ft
