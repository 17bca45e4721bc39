// Tests of the CPU reference of the fused max-pool -> BatchNorm -> GELU against cases worked out by hand (GELU
// values from the error function), and of the shape checks the reference and the CUDA launchers share.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "kernels/pool_norm_gelu.h"
#include "runtime/error.h"

namespace ft {
namespace {

PoolNormShape shape(std::int64_t n, std::int64_t c, std::int64_t h, std::int64_t w, int pool, bool channels_last) {
  PoolNormShape s;
  s.batch = n, s.channels = c, s.height = h, s.width = w, s.pool = pool, s.channels_last = channels_last;
  return s;
}

// GELU(z) = z Phi(z) and GELU'(z) = Phi(z) + z phi(z) at the points below (Python's math.erf).
constexpr double kGeluMinus1 = -0.15865525393145707, kGelu1 = 0.8413447460685429;
constexpr double kSlopeMinus1 = -0.08331547058768629, kSlope1 = 1.0833154705876864;
constexpr double kGeluHalf = 0.34573123063700656, kGeluMinus2 = -0.04550026389635842;
constexpr double kSlopeHalf = 0.8674951246561629, kSlopeMinus2 = -0.08523180107819692;

// One 2x4 map: windows {1, 4 / 3, 2} and {2, 0 / 6, 5} pool to 4 (position 1) and 6 (position 2); mean 5,
// variance 1 (unbiased 2), eps 0: xhat -1 and 1. Running statistics (0, 1) move half-way: (2.5, 1.5).
TEST(PoolNormGeluKernel, HandWorkedTrainingForwardAndBackward) {
  const std::vector<double> x = {1, 4, 2, 0, 3, 2, 6, 5};
  std::vector<double> pooled(2), y(2), mean(1), invstd(1), running_mean = {0}, running_var = {1};
  std::vector<std::uint8_t> argmax(2, 9);
  PoolNormForwardArgs<double, double> f;
  f.x = x.data(), f.pooled = pooled.data(), f.argmax = argmax.data(), f.y = y.data();
  f.running_mean = running_mean.data(), f.running_var = running_var.data(), f.mean = mean.data(), f.invstd = invstd.data();
  pool_norm_gelu_forward_cpu(f, shape(1, 1, 2, 4, 2, false), {0.5, 0.0, true});
  EXPECT_EQ(pooled, (std::vector<double>{4, 6}));
  EXPECT_EQ(argmax, (std::vector<std::uint8_t>{1, 2}));
  EXPECT_DOUBLE_EQ(mean[0], 5);
  EXPECT_DOUBLE_EQ(invstd[0], 1);
  EXPECT_DOUBLE_EQ(running_mean[0], 2.5);
  EXPECT_DOUBLE_EQ(running_var[0], 1.5);
  EXPECT_NEAR(y[0], kGeluMinus1, 1e-15);
  EXPECT_NEAR(y[1], kGelu1, 1e-15);

  // dy = 1 everywhere: grad_bias = sum GELU'(xhat), grad_weight = sum GELU'(xhat) xhat; with two values per
  // channel BatchNorm's input gradient is exactly zero, so every input element's gradient is.
  const std::vector<double> dy = {1, 1};
  std::vector<double> dx(8, 7), dw(1), db(1);
  PoolNormBackwardArgs<double, double> b;
  b.grad_y = dy.data(), b.pooled = pooled.data(), b.argmax = argmax.data(), b.mean = mean.data();
  b.invstd = invstd.data(), b.grad_x = dx.data(), b.grad_weight = dw.data(), b.grad_bias = db.data();
  pool_norm_gelu_backward_cpu(b, shape(1, 1, 2, 4, 2, false), true);
  EXPECT_NEAR(db[0], kSlopeMinus1 + kSlope1, 1e-15);
  EXPECT_NEAR(dw[0], kSlope1 - kSlopeMinus1, 1e-15);
  for (double g : dx) EXPECT_NEAR(g, 0.0, 1e-15);
}

// Eval, no pooling: x = (0.5, -2) with running mean 0.5 and variance 4, weight 2, bias 0.5: z = 0.5 and -2;
// the input gradient is weight x invstd x GELU'(z) = GELU'(z), in place (no window).
TEST(PoolNormGeluKernel, HandWorkedEvalWithoutPooling) {
  const std::vector<double> x = {0.5, -2}, weight = {2}, bias = {0.5};
  std::vector<double> y(2), mean(1), invstd(1), running_mean = {0.5}, running_var = {4};
  PoolNormForwardArgs<double, double> f;
  f.x = x.data(), f.y = y.data(), f.weight = weight.data(), f.bias = bias.data();
  f.running_mean = running_mean.data(), f.running_var = running_var.data(), f.mean = mean.data(), f.invstd = invstd.data();
  pool_norm_gelu_forward_cpu(f, shape(1, 1, 1, 2, 1, true), {0.5, 0.0, false});
  EXPECT_NEAR(y[0], kGeluHalf, 1e-15);
  EXPECT_NEAR(y[1], kGeluMinus2, 1e-15);
  EXPECT_EQ(running_mean[0], 0.5) << "eval moved the running mean";
  EXPECT_EQ(running_var[0], 4) << "eval moved the running variance";
  const std::vector<double> dy = {1, 1};
  std::vector<double> dx(2);
  PoolNormBackwardArgs<double, double> b;
  b.grad_y = dy.data(), b.pooled = x.data(), b.weight = weight.data(), b.bias = bias.data(), b.mean = mean.data();
  b.invstd = invstd.data(), b.grad_x = dx.data();
  pool_norm_gelu_backward_cpu(b, shape(1, 1, 1, 2, 1, true), false);
  EXPECT_NEAR(dx[0], kSlopeHalf, 1e-15);
  EXPECT_NEAR(dx[1], kSlopeMinus2, 1e-15);
}

// channels_last and NCHW hold the same map: the same pooled values in their own order.
TEST(PoolNormGeluKernel, LayoutsAgree) {
  const std::int64_t n = 2, c = 3, h = 5, w = 4;
  std::vector<float> nchw(n * c * h * w), nhwc(nchw.size());
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t k = 0; k < c; ++k)
      for (std::int64_t r = 0; r < h; ++r)
        for (std::int64_t q = 0; q < w; ++q) {
          const float v = static_cast<float>((i * 7 + k * 13 + r * 5 + q * 3) % 11) - 5.0f;
          nchw[((i * c + k) * h + r) * w + q] = v;
          nhwc[((i * h + r) * w + q) * c + k] = v;
        }
  auto run = [&](const std::vector<float>& x, bool channels_last) {
    std::vector<float> pooled(n * c * 2 * 2), y(pooled.size()), mean(c), invstd(c);
    std::vector<std::uint8_t> argmax(pooled.size());
    PoolNormForwardArgs<float, float> f;
    f.x = x.data(), f.pooled = pooled.data(), f.argmax = argmax.data(), f.y = y.data(), f.mean = mean.data();
    f.invstd = invstd.data();
    pool_norm_gelu_forward_cpu(f, shape(n, c, h, w, 2, channels_last), {0.1, 1e-5, true});
    return std::make_pair(y, mean);
  };
  const auto [y_nchw, mean_nchw] = run(nchw, false);
  const auto [y_nhwc, mean_nhwc] = run(nhwc, true);
  EXPECT_EQ(mean_nchw, mean_nhwc);
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t k = 0; k < c; ++k)
      for (std::int64_t p = 0; p < 4; ++p) EXPECT_EQ(y_nchw[(i * c + k) * 4 + p], y_nhwc[(i * 4 + p) * c + k]);
}

TEST(PoolNormGeluKernel, ShapeChecks) {
  EXPECT_NO_THROW(check_pool_norm_shape(shape(1, 1, 2, 4, 2, false), true));   // two values per channel
  EXPECT_THROW(check_pool_norm_shape(shape(1, 1, 2, 3, 2, false), true), Error);  // one
  EXPECT_NO_THROW(check_pool_norm_shape(shape(1, 1, 2, 3, 2, false), false));  // eval needs one
  EXPECT_NO_THROW(check_pool_norm_shape(shape(1, 1, 1, 2, 1, false), true));
  EXPECT_THROW(check_pool_norm_shape(shape(1, 1, 1, 1, 1, false), true), Error);
  EXPECT_THROW(check_pool_norm_shape(shape(1, 1, 1, 4, 2, false), false), Error);  // no 2x2 window
  EXPECT_THROW(check_pool_norm_shape(shape(1, 1, 4, 4, 3, false), false), Error);
  EXPECT_THROW(check_pool_norm_shape(shape(0, 1, 4, 4, 2, false), false), Error);
  EXPECT_THROW(check_pool_norm_shape(shape(1, 0, 4, 4, 2, false), false), Error);
  EXPECT_EQ(pooled_height(shape(1, 1, 7, 9, 2, false)), 3);
  EXPECT_EQ(pooled_width(shape(1, 1, 7, 9, 2, false)), 4);
  EXPECT_EQ(pooled_pixels(shape(3, 5, 7, 9, 2, true)), 3 * 3 * 4);
  EXPECT_EQ(pooled_pixels(shape(3, 5, 7, 9, 1, true)), 3 * 7 * 9);
}

}  // namespace
}  // namespace ft
