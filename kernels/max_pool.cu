// CUDA 2x2 max-pool forward and backward over fp32, fp16 or bf16 maps in NHWC or NCHW: a grid-stride loop of
// max_pool_pixel.h's items, 16 bytes of channels per thread where the map allows (max_pool_vector_width).
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

#include "kernels/cuda_check.h"
#include "kernels/max_pool.h"
#include "kernels/max_pool_pixel.h"
#include "runtime/error.h"

namespace ft {

// ----------------------------------------------------------------------------------------------------
// kernels

namespace {

template <typename T, int V, typename I>
__global__ void max_pool_forward_kernel(const T* __restrict__ x, T* __restrict__ y, std::uint8_t* __restrict__ argmax,
                                        PoolGeometry<I> g, I items) {
  const I stride = static_cast<I>(gridDim.x) * blockDim.x;
  for (I i = static_cast<I>(blockIdx.x) * blockDim.x + threadIdx.x; i < items; i += stride)
    max_pool_forward_item<T, V, float>(x, y, argmax, g, i);
}

template <typename T, int V, typename I>
__global__ void max_pool_backward_kernel(const T* __restrict__ grad_y, const std::uint8_t* __restrict__ argmax,
                                         T* __restrict__ grad_x, PoolGeometry<I> g, I items) {
  const I stride = static_cast<I>(gridDim.x) * blockDim.x;
  for (I i = static_cast<I>(blockIdx.x) * blockDim.x + threadIdx.x; i < items; i += stride)
    max_pool_backward_item<T, V>(grad_y, argmax, grad_x, g, i);
}

}  // namespace

// ----------------------------------------------------------------------------------------------------
// launchers

namespace {

std::int64_t pooled_elements(const MaxPoolShape& s) { return s.batch * s.channels * (s.height / 2) * (s.width / 2); }

bool fits_32_bits(const MaxPoolShape& s) { return fits_32_bit_index(s.batch * s.channels * s.height * s.width); }

// Each launch: `items` threads' worth of V channels, indexed in I.
template <typename T, int V, typename I>
void launch_forward(const T* x, T* y, std::uint8_t* argmax, const MaxPoolShape& s, cudaStream_t stream) {
  const std::int64_t items = pooled_elements(s) / V;
  max_pool_forward_kernel<T, V, I><<<grid_blocks(items), kThreadsPerBlock, 0, stream>>>(
      x, y, argmax, pool_geometry<I>(s), static_cast<I>(items));
  FT_CHECK_LAUNCH();
}

template <typename T, int V, typename I>
void launch_backward(const T* grad_y, const std::uint8_t* argmax, T* grad_x, const MaxPoolShape& s,
                     cudaStream_t stream) {
  const std::int64_t items = pooled_elements(s) / V;
  max_pool_backward_kernel<T, V, I><<<grid_blocks(items), kThreadsPerBlock, 0, stream>>>(
      grad_y, argmax, grad_x, pool_geometry<I>(s), static_cast<I>(items));
  FT_CHECK_LAUNCH();
}

template <typename T, int V>
void forward_wide(const T* x, T* y, std::uint8_t* argmax, const MaxPoolShape& s, cudaStream_t stream) {
  if (fits_32_bits(s)) return launch_forward<T, V, std::uint32_t>(x, y, argmax, s, stream);
  launch_forward<T, V, std::int64_t>(x, y, argmax, s, stream);
}

template <typename T, int V>
void backward_wide(const T* grad_y, const std::uint8_t* argmax, T* grad_x, const MaxPoolShape& s, cudaStream_t stream) {
  if (fits_32_bits(s)) return launch_backward<T, V, std::uint32_t>(grad_y, argmax, grad_x, s, stream);
  launch_backward<T, V, std::int64_t>(grad_y, argmax, grad_x, s, stream);
}

// 16 bytes of channels a thread where max_pool_vector_width allows, else one.
template <typename T>
void forward_typed(const T* x, T* y, std::uint8_t* argmax, const MaxPoolShape& s, cudaStream_t stream) {
  constexpr int kWide = 16 / sizeof(T);
  if (max_pool_vector_width(s, sizeof(T), {x, y, argmax}) == kWide)
    return forward_wide<T, kWide>(x, y, argmax, s, stream);
  forward_wide<T, 1>(x, y, argmax, s, stream);
}

template <typename T>
void backward_typed(const T* grad_y, const std::uint8_t* argmax, T* grad_x, const MaxPoolShape& s,
                    cudaStream_t stream) {
  constexpr int kWide = 16 / sizeof(T);
  if (max_pool_vector_width(s, sizeof(T), {grad_y, argmax, grad_x}) == kWide)
    return backward_wide<T, kWide>(grad_y, argmax, grad_x, s, stream);
  backward_wide<T, 1>(grad_y, argmax, grad_x, s, stream);
}

}  // namespace

void max_pool2_forward_device(MapType type, const void* x, void* y, std::uint8_t* argmax, const MaxPoolShape& s,
                              cudaStream_t stream) {
  check_max_pool_shape(s);
  switch (type) {
    case MapType::f32: return forward_typed(static_cast<const float*>(x), static_cast<float*>(y), argmax, s, stream);
    case MapType::f16:
      return forward_typed(static_cast<const __half*>(x), static_cast<__half*>(y), argmax, s, stream);
    case MapType::bf16:
      return forward_typed(static_cast<const __nv_bfloat16*>(x), static_cast<__nv_bfloat16*>(y), argmax, s, stream);
  }
}

void max_pool2_backward_device(MapType type, const void* grad_y, const std::uint8_t* argmax, void* grad_x,
                               const MaxPoolShape& s, cudaStream_t stream) {
  check_max_pool_shape(s);
  FT_REQUIRE(argmax != nullptr, "max-pool 2x2: backward needs forward's window positions");
  switch (type) {
    case MapType::f32:
      return backward_typed(static_cast<const float*>(grad_y), argmax, static_cast<float*>(grad_x), s, stream);
    case MapType::f16:
      return backward_typed(static_cast<const __half*>(grad_y), argmax, static_cast<__half*>(grad_x), s, stream);
    case MapType::bf16:
      return backward_typed(static_cast<const __nv_bfloat16*>(grad_y), argmax, static_cast<__nv_bfloat16*>(grad_x),
                            s, stream);
  }
}

}  // namespace ft
