// CPU batch assembly: one pass over the output batch applying augmented_pixel, the rule the CUDA
// kernel shares.
#include "kernels/augment.h"

#include "kernels/augment_pixel.h"

namespace ft {

void augment_batch_cpu(const std::uint8_t* images, const std::int64_t* indices, std::int64_t begin,
                       std::int64_t end, std::int64_t position_base, const AugmentParams& p, float* out) {
  const std::int64_t image_size = std::int64_t{p.height} * p.width * p.channels;
  for (std::int64_t b = begin; b < end; ++b) {
    const std::uint8_t* image = images + indices[b] * image_size;
    const SampleAugment a = sample_augment(p, position_base + b, indices[b]);
    const float mean = contrast_mean(image, p, a);
    float* dst = out + b * image_size;
    for (int c = 0; c < p.channels; ++c)
      for (int y = 0; y < p.height; ++y)
        for (int x = 0; x < p.width; ++x)
          dst[output_offset(p, c, y, x)] = augmented_pixel(image, p, a, mean, c, y, x);
  }
}

}  // namespace ft
