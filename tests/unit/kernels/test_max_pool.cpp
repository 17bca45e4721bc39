// Tests of the 2x2 max-pool: the CPU reference against cases worked out by hand (against ATen: the models test),
// and the CUDA kernels' per-thread rules, run thread by thread here, against the reference.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <limits>
#include <memory>
#include <vector>

#include "kernels/max_pool.h"
#include "kernels/max_pool_pixel.h"
#include "runtime/error.h"

namespace ft {
namespace {

MaxPoolShape shape(std::int64_t n, std::int64_t c, std::int64_t h, std::int64_t w, bool channels_last) {
  MaxPoolShape s;
  s.batch = n, s.channels = c, s.height = h, s.width = w, s.channels_last = channels_last;
  return s;
}

std::int64_t input_size(const MaxPoolShape& s) { return s.batch * s.channels * s.height * s.width; }
std::int64_t pooled_size(const MaxPoolShape& s) { return s.batch * s.channels * (s.height / 2) * (s.width / 2); }

// A 3x5 map whose last row and column are in no window: windows {1, 2 / 2, 0} (a tie: the first 2 wins, position
// 1) and {3, 3 / 3, 3} (all equal: position 0). A 2x4 map: {NaN, 1 / 9, 9} (the NaN wins) and {-inf, -inf /
// -inf, -5} (position 3); a NaN after the maximum wins too.
TEST(MaxPoolKernel, HandWorkedForwardAndBackward) {
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  const std::vector<double> x = {1, 2, 3, 3, 7,  //
                                 2, 0, 3, 3, 7,  //
                                 7, 7, 7, 7, 7};
  std::vector<double> y(2);
  std::vector<std::uint8_t> argmax(2, 9);
  max_pool2_forward_cpu(x.data(), y.data(), argmax.data(), shape(1, 1, 3, 5, false));
  EXPECT_EQ(y, (std::vector<double>{2, 3}));
  EXPECT_EQ(argmax, (std::vector<std::uint8_t>{1, 0}));

  const std::vector<double> z = {nan, 1, -inf, -inf,  //
                                 9, 9, -inf, -5};
  max_pool2_forward_cpu(z.data(), y.data(), argmax.data(), shape(1, 1, 2, 4, false));
  EXPECT_TRUE(std::isnan(y[0]));
  EXPECT_EQ(y[1], -5);
  EXPECT_EQ(argmax, (std::vector<std::uint8_t>{0, 3}));
  const std::vector<double> late_nan = {1, 2, 3, nan};  // a NaN after the maximum still wins
  max_pool2_forward_cpu(late_nan.data(), y.data(), argmax.data(), shape(1, 1, 2, 2, false));
  EXPECT_TRUE(std::isnan(y[0]));
  EXPECT_EQ(argmax[0], 3);

  // Backward of the 3x5 map: each gradient at its window's position, zero elsewhere (the left-out row and column).
  max_pool2_forward_cpu(x.data(), y.data(), argmax.data(), shape(1, 1, 3, 5, false));
  const std::vector<double> dy = {10, 20};
  std::vector<double> dx(15, 7);
  max_pool2_backward_cpu(dy.data(), argmax.data(), dx.data(), shape(1, 1, 3, 5, false));
  EXPECT_EQ(dx, (std::vector<double>{0, 10, 20, 0, 0,  //
                                     0, 0, 0, 0, 0,    //
                                     0, 0, 0, 0, 0}));
  std::vector<std::uint8_t> bad = {4, 0};
  EXPECT_THROW(max_pool2_backward_cpu(dy.data(), bad.data(), dx.data(), shape(1, 1, 3, 5, false)), Error);
}

// Values from a few integers (-3 .. 3), so that windows hold ties.
template <typename T>
void fill_tied(T* x, std::int64_t n) {
  std::uint32_t state = 12345;
  for (std::int64_t i = 0; i < n; ++i) {
    state = state * 1664525u + 1013904223u;
    x[i] = static_cast<T>(static_cast<int>(state >> 24) % 7 - 3);
  }
}

const std::vector<MaxPoolShape> kShapes = {
    shape(2, 3, 8, 8, false), shape(3, 4, 7, 9, true), shape(1, 8, 2, 2, true),  // even, odd, one window
    shape(2, 16, 5, 4, true), shape(1, 24, 3, 3, true), shape(2, 2, 6, 7, false)};

// A buffer aligned to 64 bytes, as the device allocator's are at least.
template <typename T>
std::unique_ptr<T[], decltype(&std::free)> aligned(std::int64_t n) {
  return {static_cast<T*>(std::aligned_alloc(64, ((n * sizeof(T) + 63) / 64) * 64)), &std::free};
}

// The kernels' items, thread by thread, over V channels each: forward's maxima and positions and backward's
// every input element (a sentinel in grad_x shows one left unwritten) equal the reference's.
template <typename T, int V, typename I>
void expect_items_equal_reference(const MaxPoolShape& s) {
  SCOPED_TRACE(testing::Message() << "V " << V << ", " << sizeof(I) * 8 << "-bit index, " << s.batch << "x"
                                  << s.channels << "x" << s.height << "x" << s.width
                                  << (s.channels_last ? " channels_last" : " NCHW"));
  ASSERT_EQ(s.channels % V, 0);
  auto x = aligned<T>(input_size(s)), y = aligned<T>(pooled_size(s)), want_y = aligned<T>(pooled_size(s));
  auto argmax = aligned<std::uint8_t>(pooled_size(s)), want_argmax = aligned<std::uint8_t>(pooled_size(s));
  fill_tied(x.get(), input_size(s));
  max_pool2_forward_cpu(x.get(), want_y.get(), want_argmax.get(), s);

  const PoolGeometry<I> g = pool_geometry<I>(s);
  const I items = static_cast<I>(pooled_size(s) / V);
  for (I i = 0; i < items; ++i) max_pool_forward_item<T, V, T>(x.get(), y.get(), argmax.get(), g, i);
  EXPECT_TRUE(std::equal(y.get(), y.get() + pooled_size(s), want_y.get()));
  EXPECT_TRUE(std::equal(argmax.get(), argmax.get() + pooled_size(s), want_argmax.get()));

  auto dy = aligned<T>(pooled_size(s)), dx = aligned<T>(input_size(s)), want_dx = aligned<T>(input_size(s));
  for (std::int64_t i = 0; i < pooled_size(s); ++i) dy[i] = static_cast<T>(i + 1);
  max_pool2_backward_cpu(dy.get(), argmax.get(), want_dx.get(), s);
  std::fill_n(dx.get(), input_size(s), std::numeric_limits<T>::quiet_NaN());
  for (I i = items; i-- > 0;) max_pool_backward_item<T, V>(dy.get(), argmax.get(), dx.get(), g, i);
  EXPECT_TRUE(std::equal(dx.get(), dx.get() + input_size(s), want_dx.get())) << "a wrong or unwritten gradient";
}

TEST(MaxPoolKernel, ThreadRulesEqualReference) {
  for (const MaxPoolShape& s : kShapes) {
    expect_items_equal_reference<float, 1, std::uint32_t>(s);
    expect_items_equal_reference<double, 1, std::int64_t>(s);
    if (!s.channels_last) continue;
    if (s.channels % 2 == 0) expect_items_equal_reference<double, 2, std::int64_t>(s);
    if (s.channels % 4 == 0) expect_items_equal_reference<float, 4, std::uint32_t>(s);
    if (s.channels % 8 == 0) expect_items_equal_reference<float, 8, std::uint32_t>(s);
  }
}

// 16 bytes of channels a thread exactly where the map is NHWC, its channels a multiple of them and every
// pointer 16-byte aligned.
TEST(MaxPoolKernel, VectorWidthAtItsEdges) {
  alignas(16) static std::uint8_t buffer[64];
  const void* aligned16 = buffer;
  const void* off2 = buffer + 2;
  EXPECT_EQ(max_pool_vector_width(shape(1, 8, 4, 4, true), 2, {aligned16, aligned16}), 8);   // fp16, exactly 8
  EXPECT_EQ(max_pool_vector_width(shape(1, 64, 4, 4, true), 2, {aligned16, nullptr}), 8);    // a null argmax
  EXPECT_EQ(max_pool_vector_width(shape(1, 12, 4, 4, true), 2, {aligned16}), 1);             // 12 = 8 + 4
  EXPECT_EQ(max_pool_vector_width(shape(1, 4, 4, 4, true), 2, {aligned16}), 1);              // fewer than 8
  EXPECT_EQ(max_pool_vector_width(shape(1, 4, 4, 4, true), 4, {aligned16}), 4);              // fp32, exactly 4
  EXPECT_EQ(max_pool_vector_width(shape(1, 6, 4, 4, true), 4, {aligned16}), 1);
  EXPECT_EQ(max_pool_vector_width(shape(1, 64, 4, 4, false), 2, {aligned16}), 1);            // NCHW
  EXPECT_EQ(max_pool_vector_width(shape(1, 64, 4, 4, true), 2, {aligned16, off2}), 1);       // one misaligned
  EXPECT_EQ(max_pool_vector_width(shape(1, 64, 4, 4, true), 2, {buffer + 16, buffer + 32}), 8);
  EXPECT_EQ(max_pool_vector_width(shape(1, 64, 4, 4, true), 16, {aligned16}), 1);            // one a vector
}

TEST(MaxPoolKernel, ShapeChecks) {
  EXPECT_NO_THROW(check_max_pool_shape(shape(1, 1, 2, 2, false)));
  EXPECT_THROW(check_max_pool_shape(shape(1, 1, 1, 2, false)), Error);
  EXPECT_THROW(check_max_pool_shape(shape(1, 1, 2, 1, true)), Error);
  EXPECT_THROW(check_max_pool_shape(shape(0, 1, 4, 4, false)), Error);
  EXPECT_THROW(check_max_pool_shape(shape(1, 0, 4, 4, false)), Error);
  // The reference checks before it reads or writes: backward would otherwise zero a map it has no window of.
  std::vector<float> map(5, 7), pooled(1, 1);
  std::vector<std::uint8_t> position(1, 0);
  EXPECT_THROW(max_pool2_forward_cpu(map.data(), pooled.data(), position.data(), shape(1, 1, 1, 5, false)), Error);
  EXPECT_THROW(max_pool2_backward_cpu(pooled.data(), position.data(), map.data(), shape(1, 1, 1, 5, false)), Error);
  EXPECT_EQ(map, std::vector<float>(5, 7)) << "a refused backward wrote";
  try {
    check_max_pool_shape(shape(2, 3, 1, 5, true));
    ADD_FAILURE() << "a 1x5 map was taken";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("max-pool 2x2: a 1x5 map has no 2x2 window"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace ft
