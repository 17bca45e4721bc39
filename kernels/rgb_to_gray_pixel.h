// The one definition of the gray conversion used by both the CPU reference and the CUDA kernel:
// BT.601 weights 299/587/114 in thousandths, rounded half up, in integer arithmetic.
#pragma once

#include <cstdint>

#include "kernels/common.h"

namespace ft {

FT_HOST_DEVICE inline std::uint8_t gray_of(std::uint8_t r, std::uint8_t g, std::uint8_t b) {
  return static_cast<std::uint8_t>((299u * r + 587u * g + 114u * b + 500u) / 1000u);
}

}  // namespace ft
