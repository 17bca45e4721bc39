// The per-element rules of the fused max-pool -> BatchNorm -> GELU, shared by the CPU reference and the CUDA
// kernels: addressing, the 2x2 window's maximum, a channel's statistics, the GELU and each backward element.
#pragma once

#include <cmath>
#include <cstdint>

#include "kernels/common.h"

namespace ft {

// The memory offset of element (n, c, h, w) of a [*, C, H, W] map stored NHWC (channels_last) or NCHW, in the
// index type I of the caller (the CUDA kernels index maps below 2^31 elements in 32 bits).
template <typename I>
FT_HOST_DEVICE inline I map_offset(I n, I c, I h, I w, I channels, I height, I width, bool channels_last) {
  return channels_last ? ((n * height + h) * width + w) * channels + c : ((n * channels + c) * height + h) * width + w;
}

FT_HOST_DEVICE inline bool is_nan(double v) { return v != v; }

// The maximum of a 2x2 window given in row-major order and its position 0..3: the first maximum wins and a NaN
// propagates (the last one), as ATen's max_pool2d.
template <typename A>
FT_HOST_DEVICE inline A window_max(const A (&v)[4], std::uint8_t* index) {
  A best = v[0];
  std::uint8_t at = 0;
  for (std::uint8_t k = 1; k < 4; ++k)
    if (v[k] > best || is_nan(static_cast<double>(v[k]))) best = v[k], at = k;
  *index = at;
  return best;
}

// GELU with the error function (torch's approximate='none') and its derivative, Phi(z) + z phi(z). (The std::
// functions are CUDA's own in device code.)
constexpr double kSqrtHalf = 0.70710678118654752440;
constexpr double kInvSqrt2Pi = 0.39894228040143267794;

template <typename A>
FT_HOST_DEVICE inline A gelu_of(A z) {
  return z * A(0.5) * (A(1) + std::erf(z * A(kSqrtHalf)));
}

template <typename A>
FT_HOST_DEVICE inline A gelu_slope(A z) {
  const A cdf = A(0.5) * (A(1) + std::erf(z * A(kSqrtHalf)));
  return cdf + z * std::exp(A(-0.5) * z * z) * A(kInvSqrt2Pi);
}

// One channel's normalisation from the sums of its `count` values and of their squares: mean, biased variance
// (never below 0) and 1 / sqrt(variance + eps); in training the running statistics move by `momentum` towards
// the mean and the unbiased variance (count / (count - 1) times the biased one), as BatchNorm's.
struct ChannelNorm {
  double mean, invstd;
};
FT_HOST_DEVICE inline ChannelNorm batch_norm_of(double sum, double squares, double count, double eps) {
  const double mean = sum / count;
  double variance = squares / count - mean * mean;
  if (variance < 0) variance = 0;
  return {mean, 1.0 / std::sqrt(variance + eps)};
}
FT_HOST_DEVICE inline double unbiased_variance(double sum, double squares, double count) {
  const double mean = sum / count;
  const double variance = squares / count - mean * mean;
  return (variance < 0 ? 0 : variance) * count / (count - 1);
}
FT_HOST_DEVICE inline double moved(double running, double batch, double momentum) {
  return (1 - momentum) * running + momentum * batch;
}

// The BatchNorm input z's parts for one element p of a channel: xhat = (p - mean) invstd, z = w xhat + b.
template <typename A>
FT_HOST_DEVICE inline A normalized(A p, A mean, A invstd) {
  return (p - mean) * invstd;
}

// Backward of one element: given dy, gz = dy GELU'(w xhat + b); the input gradient of the normalisation is
// w invstd (gz - sum_gz / count - xhat sum_gz_xhat / count) in training and w invstd gz with running statistics.
template <typename A>
FT_HOST_DEVICE inline A gelu_input_grad(A dy, A xhat, A weight, A bias) {
  return dy * gelu_slope(weight * xhat + bias);
}
template <typename A>
FT_HOST_DEVICE inline A norm_input_grad(A gz, A xhat, A weight, A invstd, A mean_gz, A mean_gz_xhat, bool training) {
  return training ? weight * invstd * (gz - mean_gz - xhat * mean_gz_xhat) : weight * invstd * gz;
}

}  // namespace ft
