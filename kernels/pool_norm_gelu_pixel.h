// The per-element rules of the fused max-pool -> BatchNorm -> GELU, shared by the CPU reference and the CUDA
// kernels: a channel's statistics, the GELU and each backward element (addressing and windows: max_pool_pixel.h).
#pragma once

#include <cmath>
#include <cstdint>

#include "kernels/common.h"
#include "kernels/max_pool_pixel.h"

namespace ft {

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
