// CUDA batch assembly: a per-sample pass for the contrast jitter's mean gray, then one thread per output
// element writing normalised float NCHW or NHWC (params.nhwc) by augment_pixel.h's rule.
#include "kernels/augment.h"
#include "kernels/augment_pixel.h"
#include "kernels/cuda_check.h"

namespace ft {

// ----------------------------------------------------------------------------------------------------
// kernels

// One thread per sample: the same serial sum as the CPU, so the mean agrees bit for bit.
__global__ void contrast_mean_kernel(const std::uint8_t* __restrict__ images, const std::int64_t* __restrict__ indices,
                                     std::int64_t batch, std::int64_t position_base, AugmentParams p,
                                     float* __restrict__ means) {
  const std::int64_t per_sample = std::int64_t{p.height} * p.width * p.channels;
  const std::int64_t stride = static_cast<std::int64_t>(blockDim.x) * gridDim.x;
  for (std::int64_t b = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; b < batch; b += stride) {
    const SampleAugment a = sample_augment(p, position_base + b, indices[b]);
    means[b] = contrast_mean(images + indices[b] * per_sample, p, a);
  }
}

__global__ void augment_batch_kernel(const std::uint8_t* __restrict__ images,
                                     const std::int64_t* __restrict__ indices, std::int64_t batch,
                                     std::int64_t position_base, AugmentParams p, const float* __restrict__ means,
                                     float* __restrict__ out) {
  const std::int64_t per_sample = std::int64_t{p.height} * p.width * p.channels;
  const std::int64_t total = batch * per_sample;
  const std::int64_t stride = static_cast<std::int64_t>(blockDim.x) * gridDim.x;
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < total; i += stride) {
    const std::int64_t b = i / per_sample;
    int c = 0, y = 0, x = 0;
    output_coords(p, i - b * per_sample, &c, &y, &x);
    const SampleAugment a = sample_augment(p, position_base + b, indices[b]);
    out[i] = augmented_pixel(images + indices[b] * per_sample, p, a, means ? means[b] : 0.0f, c, y, x);
  }
}

// ----------------------------------------------------------------------------------------------------
// launchers

void augment_batch_device(const std::uint8_t* d_images, const std::int64_t* d_indices, std::int64_t batch,
                          std::int64_t position_base, const AugmentParams& params, float* d_out, float* d_scratch,
                          cudaStream_t stream) {
  const std::int64_t total = batch * params.height * params.width * params.channels;
  if (total == 0) return;
  const bool contrast = params.train && params.contrast > 0;
  FT_REQUIRE(!contrast || d_scratch, "augment_batch_device: the contrast jitter needs a scratch buffer");
  if (contrast) {
    contrast_mean_kernel<<<grid_blocks(batch), kThreadsPerBlock, 0, stream>>>(d_images, d_indices, batch,
                                                                               position_base, params, d_scratch);
    FT_CHECK_LAUNCH();
  }
  augment_batch_kernel<<<grid_blocks(total), kThreadsPerBlock, 0, stream>>>(
      d_images, d_indices, batch, position_base, params, contrast ? d_scratch : nullptr, d_out);
  FT_CHECK_LAUNCH();
}

}  // namespace ft
