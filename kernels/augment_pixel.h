// The per-output-pixel rule of batch augmentation, shared verbatim by the CPU loop and the CUDA kernel
// so that both produce bit-identical batches from the same seed.
#pragma once

#include "kernels/augment.h"

namespace ft {

#ifdef __CUDACC__
__host__ __device__
#endif
inline float augmented_pixel(const std::uint8_t* image, const AugmentParams& p, const SampleAugment& a,
                             int c, int y, int x) {
  if (a.cut && y >= a.cut_y && y < a.cut_y + p.cutout && x >= a.cut_x && x < a.cut_x + p.cutout)
    return 0.0f;
  int sy = reflect(y + a.dy, p.height);
  int sx = reflect(x + a.dx, p.width);
  if (a.flip) sx = p.width - 1 - sx;
  const float v = image[(static_cast<std::int64_t>(sy) * p.width + sx) * p.channels + c] * (1.0f / 255.0f);
  return (v - p.mean[c]) * p.inv_std[c];
}

}  // namespace ft
