// The element types that collectives move: one table of their facts (name, size, floating point) and
// one dispatch from a DType to its host element type, which every backend and the engine build on.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "runtime/error.h"

namespace ft {

enum class DType : std::uint8_t { kFloat16, kBFloat16, kFloat32, kFloat64, kInt32, kInt64, kUInt8 };

// Host element types of the 16-bit floating-point formats: their bit patterns, summed through float
// (comm/half.h). Distinct types so that dispatch can tell them apart.
struct Float16Bits {
  std::uint16_t bits;
};
struct BFloat16Bits {
  std::uint16_t bits;
};

struct DTypeTraits {
  DType dtype;
  const char* name;  // as PyTorch names it (torch.float16 ...)
  std::size_t size;  // bytes per element
  bool floating;
};

// Indexed by DType.
inline constexpr DTypeTraits kDTypeTable[] = {
    {DType::kFloat16, "float16", 2, true}, {DType::kBFloat16, "bfloat16", 2, true},
    {DType::kFloat32, "float32", 4, true}, {DType::kFloat64, "float64", 8, true},
    {DType::kInt32, "int32", 4, false},    {DType::kInt64, "int64", 8, false},
    {DType::kUInt8, "uint8", 1, false},
};
inline constexpr std::size_t kDTypeCount = sizeof kDTypeTable / sizeof kDTypeTable[0];

constexpr bool dtype_table_in_order() {
  for (std::size_t i = 0; i < kDTypeCount; ++i)
    if (static_cast<std::size_t>(kDTypeTable[i].dtype) != i) return false;
  return true;
}
static_assert(dtype_table_in_order(), "kDTypeTable must list the dtypes in the enumeration's order");

// Throws ft::Error for a value outside the enumeration.
inline const DTypeTraits& dtype_traits(DType dtype) {
  const auto index = static_cast<std::size_t>(dtype);
  if (index >= kDTypeCount) throw Error(cat("unknown dtype ", index));
  return kDTypeTable[index];
}

inline std::size_t dtype_size(DType dtype) { return dtype_traits(dtype).size; }
inline const char* dtype_name(DType dtype) { return dtype_traits(dtype).name; }

// The dtype called `name` ("float32"), or nullptr.
inline const DTypeTraits* find_dtype(std::string_view name) {
  for (const DTypeTraits& traits : kDTypeTable)
    if (name == traits.name) return &traits;
  return nullptr;
}

// Returns f(T{}) where T is the host element type of `dtype` (Float16Bits, BFloat16Bits, float, double,
// std::int32_t, std::int64_t, std::uint8_t): the one place that maps a dtype to a C++ type.
template <typename F>
decltype(auto) visit_dtype(DType dtype, F&& f) {
  switch (dtype_traits(dtype).dtype) {
    case DType::kFloat16: return f(Float16Bits{});
    case DType::kBFloat16: return f(BFloat16Bits{});
    case DType::kFloat32: return f(float{});
    case DType::kFloat64: return f(double{});
    case DType::kInt32: return f(std::int32_t{});
    case DType::kInt64: return f(std::int64_t{});
    case DType::kUInt8: break;
  }
  return f(std::uint8_t{});
}

}  // namespace ft
