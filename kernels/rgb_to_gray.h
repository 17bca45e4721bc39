// RGB -> grayscale conversion of uint8 NHWC images with ITU-R BT.601 weights (0.299, 0.587, 0.114),
// as a CPU reference and a CUDA kernel that must agree with it exactly.
#pragma once

#include <cstddef>
#include <cstdint>

namespace ft {

// gray[i] = round(0.299 R + 0.587 G + 0.114 B) for `pixels` interleaved RGB pixels.
void rgb_to_gray_cpu(const std::uint8_t* rgb, std::uint8_t* gray, std::size_t pixels);

// Whether this build has CUDA kernels and a device is visible.
bool cuda_kernels_available();

// Host launcher: copies in, converts on the GPU on `stream` (cudaStream_t, may be null), copies out.
// Throws ft::Error when CUDA is not built in or fails.
void rgb_to_gray_cuda(const std::uint8_t* rgb, std::uint8_t* gray, std::size_t pixels, void* stream = nullptr);

// Device-pointer variant for callers that keep data on the GPU.
void rgb_to_gray_device(const std::uint8_t* d_rgb, std::uint8_t* d_gray, std::size_t pixels, void* stream);

}  // namespace ft
