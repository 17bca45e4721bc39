// CPU reference of the RGB -> gray conversion, and the fallbacks used when the build has no CUDA.
// Integer arithmetic in 1/1000ths makes the CPU and GPU results bit-identical.
#include "kernels/rgb_to_gray.h"

#include "kernels/gray_weights.h"
#include "runtime/error.h"

namespace ft {

void rgb_to_gray_cpu(const std::uint8_t* rgb, std::uint8_t* gray, std::size_t pixels) {
  for (std::size_t i = 0; i < pixels; ++i)
    gray[i] = gray_of(rgb[3 * i], rgb[3 * i + 1], rgb[3 * i + 2]);
}

#ifndef FUSETRAIN_WITH_CUDA
bool cuda_kernels_available() { return false; }
void rgb_to_gray_cuda(const std::uint8_t*, std::uint8_t*, std::size_t, void*) {
  throw Error("rgb_to_gray_cuda: this fusetrain was built without CUDA");
}
void rgb_to_gray_device(const std::uint8_t*, std::uint8_t*, std::size_t, void*) {
  throw Error("rgb_to_gray_device: this fusetrain was built without CUDA");
}
#endif

}  // namespace ft
