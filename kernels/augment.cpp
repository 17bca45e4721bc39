// CPU batch assembly: one pass over the output batch applying augmented_pixel; the CUDA fallback
// stubs for builds without CUDA raise a clear error.
#include "kernels/augment.h"

#include "kernels/augment_pixel.h"
#include "runtime/error.h"

namespace ft {

void augment_batch_cpu(const std::uint8_t* images, const std::int64_t* indices, std::int64_t begin,
                       std::int64_t end, std::int64_t position_base, const AugmentParams& p, float* out) {
  const std::int64_t image_size = std::int64_t{p.height} * p.width * p.channels;
  const std::int64_t plane = std::int64_t{p.height} * p.width;
  for (std::int64_t b = begin; b < end; ++b) {
    const std::uint8_t* image = images + indices[b] * image_size;
    const SampleAugment a = sample_augment(p, position_base + b, indices[b]);
    float* dst = out + b * image_size;
    for (int c = 0; c < p.channels; ++c)
      for (int y = 0; y < p.height; ++y)
        for (int x = 0; x < p.width; ++x)
          dst[c * plane + y * p.width + x] = augmented_pixel(image, p, a, c, y, x);
  }
}

#ifndef FUSETRAIN_WITH_CUDA
void augment_batch_cuda(const std::uint8_t*, const std::int64_t*, std::int64_t, std::int64_t,
                        const AugmentParams&, float*, void*) {
  throw Error("augment_batch_cuda: this fusetrain was built without CUDA");
}
#endif

}  // namespace ft
