// CPU reference of the RGB -> gray conversion. Integer arithmetic in 1/1000ths (rgb_to_gray_pixel.h)
// makes the CPU and GPU results bit-identical.
#include "kernels/rgb_to_gray.h"

#include "kernels/rgb_to_gray_pixel.h"

namespace ft {

void rgb_to_gray_cpu(const std::uint8_t* rgb, std::uint8_t* gray, std::size_t pixels) {
  for (std::size_t i = 0; i < pixels; ++i)
    gray[i] = gray_of(rgb[3 * i], rgb[3 * i + 1], rgb[3 * i + 2]);
}

}  // namespace ft
