// Max-pool 2x2 -> BatchNorm -> GELU (or BatchNorm -> GELU alone) fused, forward and backward: a CPU reference and
// CUDA kernels with host launchers taking an explicit stream (suffixes: common.h), both on pool_norm_gelu_pixel.h.
#pragma once

#include <cstdint>

#include "kernels/common.h"

namespace ft {

// The input [batch, channels, height, width]; with pool 2 the pooled map is [batch, channels, height / 2,
// width / 2] (floor: an odd last row or column is left out, as max_pool2d(2) does), with pool 1 it is the
// input. Input, pooled map, output and their gradients share one layout: NHWC (channels_last) or NCHW.
struct PoolNormShape {
  std::int64_t batch = 0, channels = 0, height = 0, width = 0;
  int pool = 2;
  bool channels_last = false;
};
std::int64_t pooled_height(const PoolNormShape& s);
std::int64_t pooled_width(const PoolNormShape& s);
std::int64_t pooled_pixels(const PoolNormShape& s);  // batch x pooled height x pooled width, per channel
// Throws ft::Error unless the sizes are positive, pool is 1 or 2, the pooled map is at least 1x1 and, in
// training, a channel has more than one value (the unbiased variance needs two).
void check_pool_norm_shape(const PoolNormShape& s, bool training);

// BatchNorm's settings: training normalises with the batch's statistics and moves the running ones by momentum
// (the fraction taken from the batch, LibTorch's convention); eval normalises with the running statistics.
struct NormSettings {
  double momentum = 0.1, eps = 1e-5;
  bool training = true;
};

// What forward reads and writes. T: the maps' element type, P: the per-channel values'. weight and bias may
// be null (1 and 0); running_mean/var may be null in training (not tracked). mean and invstd [channels] are
// written: the statistics normalised with, which backward takes. With pool 2 forward also writes the pooled
// map and each pooled element's position in its window (0..3), which backward takes in place of the input.
template <typename T, typename P>
struct PoolNormForwardArgs {
  const T* x = nullptr;
  T* pooled = nullptr;
  std::uint8_t* argmax = nullptr;
  T* y = nullptr;
  const P* weight = nullptr;
  const P* bias = nullptr;
  P* running_mean = nullptr;
  P* running_var = nullptr;
  P* mean = nullptr;
  P* invstd = nullptr;
};

// What backward reads and writes: `pooled` is the pooled map (pool 2) or the input (pool 1); grad_x has the
// input's shape (zero outside each window's maximum); grad_weight and grad_bias [channels] may be null.
template <typename T, typename P>
struct PoolNormBackwardArgs {
  const T* grad_y = nullptr;
  const T* pooled = nullptr;
  const std::uint8_t* argmax = nullptr;
  const P* weight = nullptr;
  const P* bias = nullptr;
  const P* mean = nullptr;
  const P* invstd = nullptr;
  T* grad_x = nullptr;
  P* grad_weight = nullptr;
  P* grad_bias = nullptr;
};

// The CPU reference, float or double throughout (sums in double).
template <typename T>
void pool_norm_gelu_forward_cpu(const PoolNormForwardArgs<T, T>& a, const PoolNormShape& s, const NormSettings& n);
template <typename T>
void pool_norm_gelu_backward_cpu(const PoolNormBackwardArgs<T, T>& a, const PoolNormShape& s, bool training);
extern template void pool_norm_gelu_forward_cpu<float>(const PoolNormForwardArgs<float, float>&, const PoolNormShape&,
                                                       const NormSettings&);
extern template void pool_norm_gelu_forward_cpu<double>(const PoolNormForwardArgs<double, double>&,
                                                        const PoolNormShape&, const NormSettings&);
extern template void pool_norm_gelu_backward_cpu<float>(const PoolNormBackwardArgs<float, float>&,
                                                        const PoolNormShape&, bool);
extern template void pool_norm_gelu_backward_cpu<double>(const PoolNormBackwardArgs<double, double>&,
                                                         const PoolNormShape&, bool);

// On the device (MapType: common.h) per-channel values are float32, arithmetic float32 and the channel sums
// double.

// Device scratch memory (doubles) the launchers need for `s`: per-block partial sums of every channel.
std::int64_t pool_norm_workspace(const PoolNormShape& s);

// Forward: training runs the statistics kernel (pooling, the pooled map, per-block sums), the per-channel
// finish (mean, invstd, running statistics) and the normalise+GELU kernel; eval the last two. Asynchronous on
// `stream`; no host synchronisation, so a CUDA graph can hold it.
void pool_norm_gelu_forward_device(MapType type, const PoolNormForwardArgs<void, float>& a, double* workspace,
                                   const PoolNormShape& s, const NormSettings& n, cudaStream_t stream);
// Backward: the per-channel sums of gz and gz xhat (per-block, then finished: grad_bias, grad_weight), then
// the input gradient, each input element once.
void pool_norm_gelu_backward_device(MapType type, const PoolNormBackwardArgs<void, float>& a, double* workspace,
                                    const PoolNormShape& s, bool training, cudaStream_t stream);

}  // namespace ft
