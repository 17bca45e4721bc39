// The fused conv+bias+ReLU operator as a differentiable LibTorch op: forward runs the hand-written
// CUDA kernel (CUDA tensors) or its CPU reference (CPU tensors); backward is ATen's convolution backward.
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/util/ArrayRef.h>

namespace ft {

// relu(conv2d(x, weight, bias, stride, padding)) for NCHW x, weight [out, in, kh, kw], bias [out]
// (or undefined for none), stride and padding as {h, w}. CUDA tensors must be float32; CPU tensors
// float32 or float64. Under fp16/bf16 autocast, half inputs are cast to float32 and the output is
// float32 (autocast's float32 policy). Differentiable with respect to x, weight and bias.
at::Tensor fused_conv_relu(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias,
                           at::IntArrayRef stride, at::IntArrayRef padding);

}  // namespace ft
