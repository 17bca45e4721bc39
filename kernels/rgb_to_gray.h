// RGB -> grayscale conversion of uint8 NHWC images with ITU-R BT.601 weights (0.299, 0.587, 0.114),
// as a CPU reference and a CUDA kernel that must agree with it exactly (suffixes: kernels/common.h).
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/common.h"

namespace ft {

// gray[i] = round(0.299 R + 0.587 G + 0.114 B) for `pixels` interleaved RGB pixels.
void rgb_to_gray_cpu(const std::uint8_t* rgb, std::uint8_t* gray, std::size_t pixels);

// The same on the GPU over device memory, asynchronous on `stream`.
void rgb_to_gray_device(const std::uint8_t* d_rgb, std::uint8_t* d_gray, std::size_t pixels, cudaStream_t stream);

// The same from and to host memory through the GPU; returns when `gray` is written.
void rgb_to_gray_staged(const std::uint8_t* rgb, std::uint8_t* gray, std::size_t pixels,
                        cudaStream_t stream = nullptr);

}  // namespace ft
