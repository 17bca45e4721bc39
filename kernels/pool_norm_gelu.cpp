// Shape arithmetic and the CPU reference of the fused max-pool -> BatchNorm -> GELU: plain loops over the
// rules of pool_norm_gelu_pixel.h, the specification the CUDA kernels are tested against.
#include "kernels/pool_norm_gelu.h"

#include <vector>

#include "kernels/pool_norm_gelu_pixel.h"
#include "runtime/error.h"

namespace ft {

std::int64_t pooled_height(const PoolNormShape& s) { return s.height / s.pool; }
std::int64_t pooled_width(const PoolNormShape& s) { return s.width / s.pool; }
std::int64_t pooled_pixels(const PoolNormShape& s) { return s.batch * pooled_height(s) * pooled_width(s); }

void check_pool_norm_shape(const PoolNormShape& s, bool training) {
  FT_REQUIRE(s.batch > 0 && s.channels > 0 && s.height > 0 && s.width > 0,
             "pool+norm+GELU: sizes must be positive (batch ", s.batch, ", channels ", s.channels, ", ", s.height,
             "x", s.width, ")");
  FT_REQUIRE(s.pool == 1 || s.pool == 2, "pool+norm+GELU: pool must be 1 (none) or 2 (2x2), not ", s.pool);
  FT_REQUIRE(pooled_height(s) >= 1 && pooled_width(s) >= 1, "pool+norm+GELU: a ", s.height, "x", s.width,
             " map has no 2x2 window");
  FT_REQUIRE(!training || pooled_pixels(s) > 1, "pool+norm+GELU: training BatchNorm needs more than one value per "
             "channel, not ", pooled_pixels(s));
}

namespace {

// Each pooled element's offset in the pooled map, visited in (n, h, w) order for one channel.
template <typename F>
void for_each_pooled(const PoolNormShape& s, std::int64_t c, F&& visit) {
  const std::int64_t oh = pooled_height(s), ow = pooled_width(s);
  for (std::int64_t n = 0; n < s.batch; ++n)
    for (std::int64_t h = 0; h < oh; ++h)
      for (std::int64_t w = 0; w < ow; ++w)
        visit(n, h, w, map_offset(n, c, h, w, s.channels, oh, ow, s.channels_last));
}

// Channel c's pooled values into the pooled map (pool 2: with their window positions); returns sum, squares.
template <typename T>
std::pair<double, double> pool_channel(const PoolNormForwardArgs<T, T>& a, const PoolNormShape& s, std::int64_t c) {
  double sum = 0, squares = 0;
  for_each_pooled(s, c, [&](std::int64_t n, std::int64_t h, std::int64_t w, std::int64_t o) {
    T p;
    if (s.pool == 2) {
      T v[4];
      for (int k = 0; k < 4; ++k)
        v[k] = a.x[map_offset(n, c, 2 * h + k / 2, 2 * w + k % 2, s.channels, s.height, s.width, s.channels_last)];
      p = a.pooled[o] = window_max(v, &a.argmax[o]);
    } else {
      p = a.x[o];
    }
    sum += static_cast<double>(p);
    squares += static_cast<double>(p) * static_cast<double>(p);
  });
  return {sum, squares};
}

template <typename T>
T value_or(const T* values, std::int64_t c, T otherwise) {
  return values ? values[c] : otherwise;
}

}  // namespace

template <typename T>
void pool_norm_gelu_forward_cpu(const PoolNormForwardArgs<T, T>& a, const PoolNormShape& s, const NormSettings& n) {
  check_pool_norm_shape(s, n.training);
  const double count = static_cast<double>(pooled_pixels(s));
  for (std::int64_t c = 0; c < s.channels; ++c) {
    const auto [sum, squares] = pool_channel(a, s, c);
    if (n.training) {
      const ChannelNorm stats = batch_norm_of(sum, squares, count, n.eps);
      a.mean[c] = static_cast<T>(stats.mean), a.invstd[c] = static_cast<T>(stats.invstd);
      if (a.running_mean) a.running_mean[c] = static_cast<T>(moved(a.running_mean[c], stats.mean, n.momentum));
      if (a.running_var)
        a.running_var[c] = static_cast<T>(moved(a.running_var[c], unbiased_variance(sum, squares, count), n.momentum));
    } else {
      a.mean[c] = a.running_mean[c];
      a.invstd[c] = static_cast<T>(1.0 / std::sqrt(static_cast<double>(a.running_var[c]) + n.eps));
    }
    const T* source = s.pool == 2 ? a.pooled : a.x;
    const T weight = value_or(a.weight, c, T(1)), bias = value_or(a.bias, c, T(0));
    for_each_pooled(s, c, [&](std::int64_t, std::int64_t, std::int64_t, std::int64_t o) {
      a.y[o] = gelu_of(weight * normalized(source[o], a.mean[c], a.invstd[c]) + bias);
    });
  }
}

template <typename T>
void pool_norm_gelu_backward_cpu(const PoolNormBackwardArgs<T, T>& a, const PoolNormShape& s, bool training) {
  check_pool_norm_shape(s, training);
  const double count = static_cast<double>(pooled_pixels(s));
  for (std::int64_t c = 0; c < s.channels; ++c) {
    const T weight = value_or(a.weight, c, T(1)), bias = value_or(a.bias, c, T(0));
    const auto xhat_at = [&](std::int64_t o) { return normalized(a.pooled[o], a.mean[c], a.invstd[c]); };
    double sum_gz = 0, sum_gz_xhat = 0;
    for_each_pooled(s, c, [&](std::int64_t, std::int64_t, std::int64_t, std::int64_t o) {
      const T gz = gelu_input_grad(a.grad_y[o], xhat_at(o), weight, bias);
      sum_gz += static_cast<double>(gz);
      sum_gz_xhat += static_cast<double>(gz) * static_cast<double>(xhat_at(o));
    });
    if (a.grad_bias) a.grad_bias[c] = static_cast<T>(sum_gz);
    if (a.grad_weight) a.grad_weight[c] = static_cast<T>(sum_gz_xhat);
    if (!a.grad_x) continue;
    if (s.pool == 2)  // every input element of the channel, so that those no window's maximum is are zero
      for (std::int64_t n = 0; n < s.batch; ++n)
        for (std::int64_t h = 0; h < s.height; ++h)
          for (std::int64_t w = 0; w < s.width; ++w)
            a.grad_x[map_offset(n, c, h, w, s.channels, s.height, s.width, s.channels_last)] = T(0);
    const T mean_gz = static_cast<T>(sum_gz / count), mean_gz_xhat = static_cast<T>(sum_gz_xhat / count);
    for_each_pooled(s, c, [&](std::int64_t n, std::int64_t h, std::int64_t w, std::int64_t o) {
      const T gz = gelu_input_grad(a.grad_y[o], xhat_at(o), weight, bias);
      const T g = norm_input_grad(gz, xhat_at(o), weight, a.invstd[c], mean_gz, mean_gz_xhat, training);
      const int k = s.pool == 2 ? a.argmax[o] : 0;
      a.grad_x[s.pool == 2 ? map_offset(n, c, 2 * h + k / 2, 2 * w + k % 2, s.channels, s.height, s.width,
                                        s.channels_last)
                           : o] = g;
    });
  }
}

template void pool_norm_gelu_forward_cpu<float>(const PoolNormForwardArgs<float, float>&, const PoolNormShape&,
                                                const NormSettings&);
template void pool_norm_gelu_forward_cpu<double>(const PoolNormForwardArgs<double, double>&, const PoolNormShape&,
                                                 const NormSettings&);
template void pool_norm_gelu_backward_cpu<float>(const PoolNormBackwardArgs<float, float>&, const PoolNormShape&,
                                                 bool);
template void pool_norm_gelu_backward_cpu<double>(const PoolNormBackwardArgs<double, double>&, const PoolNormShape&,
                                                  bool);

}  // namespace ft
