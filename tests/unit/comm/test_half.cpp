// Tests of the fp16/bf16 conversions in comm/half.h: exhaustive round trips over all 65536 bit patterns,
// ties to even at every midpoint between neighbouring values, overflow, underflow, NaN and the sums.
#include "comm/half.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace ft {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

bool half_is_nan(std::uint16_t h) { return (h & 0x7c00u) == 0x7c00u && (h & 0x3ffu) != 0; }
bool bf16_is_nan(std::uint16_t b) { return (b & 0x7f80u) == 0x7f80u && (b & 0x7fu) != 0; }

TEST(Half, EveryBitPatternRoundTrips) {
  for (std::uint32_t bits = 0; bits <= 0xffffu; ++bits) {
    const auto h = static_cast<std::uint16_t>(bits);
    const float f = half_to_float(h);
    if (half_is_nan(h)) {
      EXPECT_TRUE(std::isnan(f)) << std::hex << bits;
      EXPECT_TRUE(half_is_nan(float_to_half(f))) << std::hex << bits;
    } else {
      ASSERT_EQ(float_to_half(f), h) << std::hex << bits;
    }
  }
}

TEST(Half, KnownValues) {
  EXPECT_EQ(float_to_half(1.0f), 0x3c00u);
  EXPECT_EQ(float_to_half(-2.0f), 0xc000u);
  EXPECT_EQ(float_to_half(0.5f), 0x3800u);
  EXPECT_EQ(float_to_half(65504.0f), 0x7bffu);
  EXPECT_EQ(float_to_half(-0.0f), 0x8000u);
  EXPECT_EQ(float_to_half(std::ldexp(1.0f, -24)), 0x0001u);  // smallest subnormal
  EXPECT_EQ(float_to_half(std::ldexp(1.0f, -14)), 0x0400u);  // smallest normal
  EXPECT_EQ(float_to_half(std::numeric_limits<float>::infinity()), 0x7c00u);
  EXPECT_EQ(float_to_half(-std::numeric_limits<float>::infinity()), 0xfc00u);
  EXPECT_EQ(half_to_float(0x3555u), 0x1.554p-2f);
  EXPECT_EQ(half_to_float(0x0001u), std::ldexp(1.0f, -24));
  EXPECT_EQ(half_to_float(0x8001u), -std::ldexp(1.0f, -24));
}

// Between every two neighbouring finite fp16 values the midpoint goes to the even one and anything
// off the midpoint goes to the nearer one. Midpoints are exact floats (fp16 has 11 significant bits).
TEST(Half, RoundsToNearestEvenEverywhere) {
  for (std::uint16_t low = 0; low < 0x7bffu; ++low) {
    const auto high = static_cast<std::uint16_t>(low + 1);
    const float mid = half_to_float(low) + (half_to_float(high) - half_to_float(low)) / 2;
    const std::uint16_t even = (low & 1u) ? high : low;
    ASSERT_EQ(float_to_half(mid), even) << std::hex << low;
    ASSERT_EQ(float_to_half(std::nextafter(mid, 0.0f)), low) << std::hex << low;
    ASSERT_EQ(float_to_half(std::nextafter(mid, kInf)), high) << std::hex << low;
    ASSERT_EQ(float_to_half(-mid), 0x8000u | even) << std::hex << low;
  }
}

TEST(Half, OverflowAndUnderflow) {
  EXPECT_EQ(float_to_half(std::nextafter(65520.0f, 0.0f)), 0x7bffu);
  EXPECT_EQ(float_to_half(65520.0f), 0x7c00u);  // tie between 65504 (odd) and infinity (even)
  EXPECT_EQ(float_to_half(1e10f), 0x7c00u);
  EXPECT_EQ(float_to_half(-1e10f), 0xfc00u);
  EXPECT_EQ(float_to_half(std::ldexp(1.0f, -25)), 0x0000u);  // tie between 0 (even) and 2^-24
  EXPECT_EQ(float_to_half(std::nextafter(std::ldexp(1.0f, -25), 1.0f)), 0x0001u);
  EXPECT_EQ(float_to_half(1e-30f), 0x0000u);
  EXPECT_EQ(float_to_half(-1e-30f), 0x8000u);
  EXPECT_TRUE(half_is_nan(float_to_half(std::numeric_limits<float>::quiet_NaN())));
}

TEST(BFloat16, EveryBitPatternRoundTrips) {
  for (std::uint32_t bits = 0; bits <= 0xffffu; ++bits) {
    const auto b = static_cast<std::uint16_t>(bits);
    const float f = bf16_to_float(b);
    if (bf16_is_nan(b)) {
      EXPECT_TRUE(bf16_is_nan(float_to_bf16(f))) << std::hex << bits;
    } else {
      ASSERT_EQ(float_to_bf16(f), b) << std::hex << bits;
    }
  }
}

TEST(BFloat16, RoundsToNearestEvenEverywhere) {
  for (std::uint16_t low = 0; low < 0x7f7fu; ++low) {
    const auto high = static_cast<std::uint16_t>(low + 1);
    const float mid = bf16_to_float(low) + (bf16_to_float(high) - bf16_to_float(low)) / 2;  // no overflow
    const std::uint16_t even = (low & 1u) ? high : low;
    ASSERT_EQ(float_to_bf16(mid), even) << std::hex << low;
    ASSERT_EQ(float_to_bf16(std::nextafter(mid, 0.0f)), low) << std::hex << low;
    ASSERT_EQ(float_to_bf16(std::nextafter(mid, kInf)), high) << std::hex << low;
  }
}

TEST(BFloat16, KnownValuesOverflowAndNaN) {
  EXPECT_EQ(float_to_bf16(1.0f), 0x3f80u);
  EXPECT_EQ(float_to_bf16(-3.0f), 0xc040u);
  EXPECT_EQ(float_to_bf16(std::numeric_limits<float>::max()), 0x7f80u);  // rounds up to infinity
  EXPECT_EQ(float_to_bf16(std::numeric_limits<float>::infinity()), 0x7f80u);
  // A NaN whose payload lives only in the low 16 bits must not truncate to infinity.
  EXPECT_TRUE(bf16_is_nan(float_to_bf16(bits_float(0x7f800001u))));
  EXPECT_TRUE(bf16_is_nan(float_to_bf16(bits_float(0xff800001u))));
}

TEST(HalfSums, AddThroughFloatAndRoundOnce) {
  const std::uint16_t a[] = {float_to_half(1.0f), float_to_half(1.0f), float_to_half(65504.0f),
                             float_to_half(-3.5f), float_to_half(1.0f)};
  const std::uint16_t b[] = {float_to_half(2.0f), float_to_half(std::ldexp(1.0f, -11)),
                             float_to_half(65504.0f), float_to_half(3.5f), 0x0001u};
  std::uint16_t out[5];
  sum_fp16(out, a, b, 5);
  EXPECT_EQ(half_to_float(out[0]), 3.0f);
  EXPECT_EQ(out[1], 0x3c00u);  // 1 + half an ulp: tie, stays at the even 1.0
  EXPECT_EQ(out[2], 0x7c00u);  // overflow to infinity
  EXPECT_EQ(out[3], 0x0000u);
  EXPECT_EQ(out[4], 0x3c00u);  // a subnormal is far below 1.0's ulp

  const std::uint16_t c[] = {float_to_bf16(1.0f), float_to_bf16(256.0f)};
  const std::uint16_t d[] = {float_to_bf16(0.5f), float_to_bf16(1.0f)};
  std::uint16_t sum[2];
  sum_bf16(sum, c, d, 2);
  EXPECT_EQ(bf16_to_float(sum[0]), 1.5f);
  EXPECT_EQ(bf16_to_float(sum[1]), 256.0f);  // 257 is a tie between 256 (even) and 258
}

}  // namespace
}  // namespace ft
