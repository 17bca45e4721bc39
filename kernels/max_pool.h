// Max-pool 2x2 (stride 2, floor) keeping each window's maximum position as one byte, forward and backward: a CPU
// reference and CUDA kernels with host launchers taking an explicit stream (suffixes: common.h).
#pragma once

#include <cstdint>
#include <initializer_list>

#include "kernels/common.h"

namespace ft {

// The input [batch, channels, height, width] and the pooled map [batch, channels, height / 2, width / 2] (an odd
// last row or column is left out, as max_pool2d(2) does), both NHWC (channels_last) or both NCHW.
struct MaxPoolShape {
  std::int64_t batch = 0, channels = 0, height = 0, width = 0;
  bool channels_last = false;
};
// Throws ft::Error unless the sizes are positive and the map has a 2x2 window.
void check_max_pool_shape(const MaxPoolShape& s);

// Forward: y holds each window's maximum and argmax (unless null) its position, 0..3 in row-major order; the first
// maximum wins and a NaN propagates, as ATen's max_pool2d. Backward: grad_x, the input's shape, holds grad_y at
// each window's maximum and zero everywhere else.
template <typename T>
void max_pool2_forward_cpu(const T* x, T* y, std::uint8_t* argmax, const MaxPoolShape& s);
template <typename T>
void max_pool2_backward_cpu(const T* grad_y, const std::uint8_t* argmax, T* grad_x, const MaxPoolShape& s);
extern template void max_pool2_forward_cpu<float>(const float*, float*, std::uint8_t*, const MaxPoolShape&);
extern template void max_pool2_forward_cpu<double>(const double*, double*, std::uint8_t*, const MaxPoolShape&);
extern template void max_pool2_backward_cpu<float>(const float*, const std::uint8_t*, float*, const MaxPoolShape&);
extern template void max_pool2_backward_cpu<double>(const double*, const std::uint8_t*, double*, const MaxPoolShape&);

// The channels a CUDA thread takes (kernels/max_pool_pixel.h): 16 bytes of them where the map is NHWC, its
// channels a multiple of that and every pointer 16-byte aligned; else 1.
int max_pool_vector_width(const MaxPoolShape& s, int element_bytes, std::initializer_list<const void*> pointers);

// The same as the CPU functions over device memory, asynchronous on `stream` (no host synchronisation, so a CUDA
// graph can hold them); argmax may be null in forward (no backward to follow).
void max_pool2_forward_device(MapType type, const void* x, void* y, std::uint8_t* argmax, const MaxPoolShape& s,
                              cudaStream_t stream);
void max_pool2_backward_device(MapType type, const void* grad_y, const std::uint8_t* argmax, void* grad_x,
                               const MaxPoolShape& s, cudaStream_t stream);

}  // namespace ft
