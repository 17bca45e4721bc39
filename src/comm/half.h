// Conversions between float and the two 16-bit training formats (IEEE fp16, bfloat16), rounding to
// nearest even, plus the element-wise sums the host backends use to reduce 16-bit gradients.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace ft {

inline std::uint32_t float_bits(float value) {
  std::uint32_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  return bits;
}

inline float bits_float(std::uint32_t bits) {
  float value;
  std::memcpy(&value, &bits, sizeof value);
  return value;
}

// fp16: 1 sign, 5 exponent (bias 15), 10 mantissa bits. Every fp16 value is exact as a float.
inline float half_to_float(std::uint16_t half) {
  const std::uint32_t sign = static_cast<std::uint32_t>(half & 0x8000u) << 16;
  const std::uint32_t exponent = (half >> 10) & 0x1fu;
  const std::uint32_t mantissa = half & 0x3ffu;
  if (exponent == 0x1f) return bits_float(sign | 0x7f800000u | (mantissa << 13));  // inf, NaN
  if (exponent != 0) return bits_float(sign | ((exponent + 112) << 23) | (mantissa << 13));
  const float magnitude = static_cast<float>(mantissa) * 0x1p-24f;  // subnormal or zero, exact
  return sign ? -magnitude : magnitude;
}

// Rounds to the nearest fp16, ties to even; beyond the largest finite value (65504) gives infinity,
// NaN stays a (quiet) NaN.
inline std::uint16_t float_to_half(float value) {
  const std::uint32_t bits = float_bits(value);
  const auto sign = static_cast<std::uint16_t>((bits >> 16) & 0x8000u);
  const std::uint32_t magnitude = bits & 0x7fffffffu;
  if (magnitude > 0x7f800000u) return sign | 0x7e00u;          // NaN
  if (magnitude >= 0x477ff000u) return sign | 0x7c00u;         // >= 65520 rounds to infinity
  if (magnitude >= 0x38800000u) {                              // normal fp16 (>= 2^-14)
    std::uint32_t half = (magnitude - 0x38000000u) >> 13;      // rebias exponent 127 -> 15
    const std::uint32_t rest = magnitude & 0x1fffu;
    if (rest > 0x1000u || (rest == 0x1000u && (half & 1u))) ++half;  // a carry rolls into the exponent
    return static_cast<std::uint16_t>(sign | half);
  }
  const std::uint32_t exponent = magnitude >> 23;
  if (exponent < 102) return sign;                             // below 2^-25: rounds to zero
  // Subnormal fp16: the value in units of 2^-24 is the float's full significand shifted right.
  const std::uint32_t significand = (magnitude & 0x7fffffu) | 0x800000u;
  const std::uint32_t shift = 126 - exponent;                  // 14 .. 24
  std::uint32_t half = significand >> shift;
  const std::uint32_t rest = significand & ((1u << shift) - 1u);
  const std::uint32_t tie = 1u << (shift - 1);
  if (rest > tie || (rest == tie && (half & 1u))) ++half;      // may become the smallest normal
  return static_cast<std::uint16_t>(sign | half);
}

// bfloat16: the upper half of a float (8 exponent bits, 7 mantissa bits).
inline float bf16_to_float(std::uint16_t value) {
  return bits_float(static_cast<std::uint32_t>(value) << 16);
}

inline std::uint16_t float_to_bf16(float value) {
  std::uint32_t bits = float_bits(value);
  if ((bits & 0x7fffffffu) > 0x7f800000u) return static_cast<std::uint16_t>((bits >> 16) | 0x40u);
  bits += 0x7fffu + ((bits >> 16) & 1u);  // round to nearest even; overflow correctly reaches infinity
  return static_cast<std::uint16_t>(bits >> 16);
}

// out[i] = round(a[i] + b[i]). The float sum of two 16-bit values is either exact or so far from a
// rounding tie that rounding it again gives the correctly rounded 16-bit sum. `out` may alias a or b.
inline void sum_fp16(std::uint16_t* out, const std::uint16_t* a, const std::uint16_t* b, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) out[i] = float_to_half(half_to_float(a[i]) + half_to_float(b[i]));
}

inline void sum_bf16(std::uint16_t* out, const std::uint16_t* a, const std::uint16_t* b, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) out[i] = float_to_bf16(bf16_to_float(a[i]) + bf16_to_float(b[i]));
}

}  // namespace ft
