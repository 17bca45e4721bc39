// Test data for the collectives of any element type: a double written into element i of a raw buffer of
// that type (16-bit floats through their conversions), as the all-reduce tests fill their inputs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "comm/dtype.h"
#include "comm/half.h"

namespace ft::test {

inline void store(DType dtype, void* base, std::size_t i, double v) {
  visit_dtype(dtype, [&](auto element) {
    using T = decltype(element);
    if constexpr (std::is_same_v<T, Float16Bits>)
      static_cast<std::uint16_t*>(base)[i] = float_to_half(static_cast<float>(v));
    else if constexpr (std::is_same_v<T, BFloat16Bits>)
      static_cast<std::uint16_t*>(base)[i] = float_to_bf16(static_cast<float>(v));
    else
      static_cast<T*>(base)[i] = static_cast<T>(v);
  });
}

}  // namespace ft::test
