// CUDA batch assembly: one thread per output element (sample, channel, row, column), reading the
// gathered uint8 NHWC image and writing normalised float NCHW; the rule is augment_pixel.h's.
#include "kernels/augment.h"
#include "kernels/augment_pixel.h"
#include "kernels/cuda_check.h"

namespace ft {

__global__ void augment_batch_kernel(const std::uint8_t* __restrict__ images,
                                     const std::int64_t* __restrict__ indices, std::int64_t batch,
                                     std::int64_t position_base, AugmentParams p, float* __restrict__ out) {
  const std::int64_t plane = std::int64_t{p.height} * p.width;
  const std::int64_t per_sample = plane * p.channels;
  const std::int64_t total = batch * per_sample;
  const std::int64_t stride = static_cast<std::int64_t>(blockDim.x) * gridDim.x;
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < total; i += stride) {
    const std::int64_t b = i / per_sample;
    const std::int64_t rest = i - b * per_sample;
    const int c = static_cast<int>(rest / plane);
    const int y = static_cast<int>((rest % plane) / p.width);
    const int x = static_cast<int>(rest % p.width);
    const SampleAugment a = sample_augment(p, position_base + b, indices[b]);
    out[i] = augmented_pixel(images + indices[b] * per_sample, p, a, c, y, x);
  }
}

void augment_batch_cuda(const std::uint8_t* images, const std::int64_t* indices, std::int64_t batch,
                        std::int64_t position_base, const AugmentParams& params, float* out, void* stream) {
  const std::int64_t total = batch * params.height * params.width * params.channels;
  if (total == 0) return;
  const int threads = 256;
  const std::int64_t wanted = (total + threads - 1) / threads;
  const int blocks = static_cast<int>(wanted < 65535 * 8 ? wanted : 65535 * 8);
  augment_batch_kernel<<<blocks, threads, 0, static_cast<cudaStream_t>(stream)>>>(
      images, indices, batch, position_base, params, out);
  FT_CHECK_LAUNCH();
}

}  // namespace ft
