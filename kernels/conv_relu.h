// Fused direct convolution + bias + ReLU on NCHW float tensors: a CUDA kernel with a host launcher
// taking an explicit stream, and a plain-loop CPU reference that the kernel must agree with (suffixes: common.h).
#pragma once

#include "kernels/common.h"

namespace ft {

// Sizes of one convolution: input [batch, in_channels, height, width], weight
// [out_channels, in_channels, kernel_h, kernel_w], output [batch, out_channels, out_height, out_width].
struct ConvGeometry {
  int batch = 0, in_channels = 0, height = 0, width = 0;
  int out_channels = 0, kernel_h = 0, kernel_w = 0;
  int stride_h = 1, stride_w = 1, pad_h = 0, pad_w = 0;
};

// floor((height + 2 pad_h - kernel_h) / stride_h) + 1, and the same along the width.
int conv_out_height(const ConvGeometry& g);
int conv_out_width(const ConvGeometry& g);

// Throws ft::Error unless every size is positive, padding non-negative and the output at least 1x1.
void check_conv_geometry(const ConvGeometry& g);

// y = max(conv(x, w) + b, 0) with plain loops; b may be null (no bias). ReLU keeps NaN, as at::relu does.
template <typename T>
void conv_bias_relu_cpu(const T* x, const T* w, const T* b, T* y, const ConvGeometry& g);
extern template void conv_bias_relu_cpu<float>(const float*, const float*, const float*, float*,
                                               const ConvGeometry&);
extern template void conv_bias_relu_cpu<double>(const double*, const double*, const double*, double*,
                                                const ConvGeometry&);

// The same on the GPU over device memory, asynchronous on `stream`; throws ft::Error if the launch fails.
void conv_bias_relu_device(const float* d_x, const float* d_w, const float* d_b, float* d_y, const ConvGeometry& g,
                           cudaStream_t stream);

}  // namespace ft
