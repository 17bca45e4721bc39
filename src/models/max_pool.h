// The 2x2 max-pool (stride 2, floor) as a differentiable LibTorch op over kernels/max_pool (CUDA tensors) or its
// CPU reference (CPU tensors): what ATen's max_pool2d(x, 2) computes, keeping a byte per window for backward.
#pragma once

#include <ATen/ATen.h>

namespace ft {

// x: [N, C, H, W] with H, W >= 2, float32, float16 or bfloat16 (CUDA) or float32, float64, float16 or bfloat16
// (CPU, computed in float32 or float64), NCHW or channels_last; the output has x's type and layout. Where autograd
// records the op, forward keeps each window's maximum position (uint8) for backward, which sends each pooled
// element's gradient to that position (the first maximum, as ATen's) and zero elsewhere.
at::Tensor max_pool2x2(const at::Tensor& x);

}  // namespace ft
