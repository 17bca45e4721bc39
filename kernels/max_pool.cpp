// Shape checks, the vector width of the CUDA threads and the CPU reference of the 2x2 max-pool: plain loops over
// each window, the specification the kernels' per-thread rules (max_pool_pixel.h) are tested against.
#include "kernels/max_pool.h"

#include "kernels/max_pool_pixel.h"
#include "runtime/error.h"

namespace ft {

void check_max_pool_shape(const MaxPoolShape& s) {
  FT_REQUIRE(s.batch > 0 && s.channels > 0 && s.height > 0 && s.width > 0, "max-pool 2x2: sizes must be positive "
             "(batch ", s.batch, ", channels ", s.channels, ", ", s.height, "x", s.width, ")");
  FT_REQUIRE(s.height >= 2 && s.width >= 2, "max-pool 2x2: a ", s.height, "x", s.width, " map has no 2x2 window");
}

int max_pool_vector_width(const MaxPoolShape& s, int element_bytes, std::initializer_list<const void*> pointers) {
  constexpr int kVectorBytes = 16;
  const int width = kVectorBytes / element_bytes;
  if (!s.channels_last || width <= 1 || s.channels % width != 0) return 1;
  for (const void* p : pointers)
    if (reinterpret_cast<std::uintptr_t>(p) % kVectorBytes != 0) return 1;
  return width;
}

namespace {

// Each pooled element (n, c, h, w) with its offset in the pooled map.
template <typename F>
void for_each_pooled(const MaxPoolShape& s, F&& visit) {
  const std::int64_t oh = s.height / 2, ow = s.width / 2;
  for (std::int64_t n = 0; n < s.batch; ++n)
    for (std::int64_t c = 0; c < s.channels; ++c)
      for (std::int64_t h = 0; h < oh; ++h)
        for (std::int64_t w = 0; w < ow; ++w)
          visit(n, c, h, w, map_offset(n, c, h, w, s.channels, oh, ow, s.channels_last));
}

}  // namespace

template <typename T>
void max_pool2_forward_cpu(const T* x, T* y, std::uint8_t* argmax, const MaxPoolShape& s) {
  check_max_pool_shape(s);
  for_each_pooled(s, [&](std::int64_t n, std::int64_t c, std::int64_t h, std::int64_t w, std::int64_t o) {
    T v[4];
    for (int k = 0; k < 4; ++k)
      v[k] = x[map_offset(n, c, 2 * h + k / 2, 2 * w + k % 2, s.channels, s.height, s.width, s.channels_last)];
    std::uint8_t at;
    y[o] = window_max(v, &at);
    if (argmax) argmax[o] = at;
  });
}

template <typename T>
void max_pool2_backward_cpu(const T* grad_y, const std::uint8_t* argmax, T* grad_x, const MaxPoolShape& s) {
  check_max_pool_shape(s);
  for (std::int64_t i = 0; i < s.batch * s.channels * s.height * s.width; ++i) grad_x[i] = T(0);
  for_each_pooled(s, [&](std::int64_t n, std::int64_t c, std::int64_t h, std::int64_t w, std::int64_t o) {
    FT_REQUIRE(argmax[o] < 4, "max-pool 2x2: window position ", int{argmax[o]}, " is not 0..3");
    grad_x[map_offset(n, c, 2 * h + argmax[o] / 2, 2 * w + argmax[o] % 2, s.channels, s.height, s.width,
                      s.channels_last)] = grad_y[o];
  });
}

template void max_pool2_forward_cpu<float>(const float*, float*, std::uint8_t*, const MaxPoolShape&);
template void max_pool2_forward_cpu<double>(const double*, double*, std::uint8_t*, const MaxPoolShape&);
template void max_pool2_backward_cpu<float>(const float*, const std::uint8_t*, float*, const MaxPoolShape&);
template void max_pool2_backward_cpu<double>(const double*, const std::uint8_t*, double*, const MaxPoolShape&);

}  // namespace ft
