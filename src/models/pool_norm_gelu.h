// gelu(batch_norm(max_pool2d(x, 2))) and gelu(batch_norm(x)) as one differentiable LibTorch op over the fused
// kernels (kernels/pool_norm_gelu: CUDA tensors) or their CPU reference (CPU tensors), and the layer choice.
#pragma once

#include <ATen/ATen.h>

#include "config/choices.h"
#include "models/sync_batch_norm.h"

namespace ft {

// One BatchNorm's tensors and settings. weight and bias may be undefined (1 and 0); running_mean and
// running_var, when defined, are float tensors updated in place in training (never in eval, which normalises
// with them; eval without them normalises with the batch's statistics, as BatchNorm does).
struct PoolNormArgs {
  at::Tensor weight, bias, running_mean, running_var;
  double momentum = 0.1, eps = 1e-5;
  bool training = true;
  int pool = 2;  // 2: max-pool 2x2 first; 1: none
};

// x: [N, C, H, W], float32, float16 or bfloat16 (CUDA) or float32, float64, float16 or bfloat16 (CPU, computed
// in float32 or float64), NCHW or channels_last; the output has x's type and layout. Differentiable with respect
// to x, weight and bias. Forward saves for backward the pooled map in x's type (pool 1: x itself), each pooled
// element's window position (uint8, pool 2) and the per-channel mean and 1/sqrt(var + eps) it normalised with.
at::Tensor fused_pool_norm_gelu(const at::Tensor& x, const PoolNormArgs& args);

// Whether a layer runs the fused kernels: `kernel` fused, and never for a BatchNorm that normalises over several
// ranks (`synchronized`).
bool fuses_pool_norm_gelu(PoolNormGeluKernel kernel, bool synchronized);

// gelu(norm(pool == 2 ? max_pool2d(x, 2) : x)) for a model's layer: fused where fuses_pool_norm_gelu says,
// else ATen's three operations, the max-pool max_pool2x2's (models/max_pool) where `kernel` is pool. Either way,
// in training, the layer counts the batch as LibTorch's BatchNorm does.
at::Tensor pool_norm_gelu(const at::Tensor& x, SyncBatchNorm2dImpl& norm, int pool, PoolNormGeluKernel kernel);

}  // namespace ft
