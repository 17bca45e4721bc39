// Batch assembly for training: gather images by index, random crop (reflect padding), horizontal flip,
// cutout, normalisation and uint8 NHWC -> float NCHW, in one pass; a CPU version and a CUDA kernel.
#pragma once

#include <cstdint>

namespace ft {

struct AugmentParams {
  int height = 0, width = 0, channels = 0;  // of the stored images
  int crop_padding = 0;                     // random translation in [-pad, pad] with reflect padding
  bool flip = false;
  // With flip: the first epoch flips each image at random (a draw fixed per image by image_seed), and
  // every later epoch flips exactly the images the previous one did not, so that each image is seen
  // both ways in every pair of epochs.
  bool alternate_flip = false;
  std::uint64_t image_seed = 0;
  int epoch = 1;  // 1-based, for alternate_flip
  int cutout = 0;                           // side of the zeroed square (after normalisation: 0)
  float mean[3] = {0, 0, 0};                // per channel, pixel units / 255
  float inv_std[3] = {1, 1, 1};
  std::uint64_t seed = 0;                   // per batch; each sample derives its own stream from it
  bool train = true;                        // false: no randomness, normalisation only
};

// Per-sample random choices, derived from (seed, sample position) — and for alternating flips from the
// image's index — by a counter-based hash so that the CPU and CUDA paths draw identical augmentations.
struct SampleAugment {
  int dy = 0, dx = 0;  // translation
  bool flip = false;
  bool cut = false;
  int cut_y = 0, cut_x = 0;  // cutout top-left; the square may reach outside the image
};

#ifdef __CUDACC__
__host__ __device__
#endif
inline std::uint64_t mix64(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

#ifdef __CUDACC__
__host__ __device__
#endif
inline SampleAugment sample_augment(const AugmentParams& p, std::int64_t position, std::int64_t image) {
  SampleAugment a;
  if (!p.train) return a;
  const std::uint64_t r = mix64(p.seed ^ mix64(static_cast<std::uint64_t>(position)));
  const std::uint64_t r2 = mix64(r);
  if (p.crop_padding > 0) {
    const int span = 2 * p.crop_padding + 1;
    a.dy = static_cast<int>(r % span) - p.crop_padding;
    a.dx = static_cast<int>((r >> 16) % span) - p.crop_padding;
  }
  if (p.alternate_flip) {
    const std::uint64_t first = mix64(p.image_seed ^ mix64(static_cast<std::uint64_t>(image))) & 1u;
    a.flip = p.flip && ((first ^ static_cast<std::uint64_t>((p.epoch - 1) & 1)) != 0);
  } else {
    a.flip = p.flip && ((r >> 40) & 1u);
  }
  if (p.cutout > 0) {
    // Centre uniform over the image, as in the cutout paper.
    a.cut = true;
    a.cut_y = static_cast<int>(r2 % static_cast<std::uint64_t>(p.height)) - p.cutout / 2;
    a.cut_x = static_cast<int>((r2 >> 20) % static_cast<std::uint64_t>(p.width)) - p.cutout / 2;
  }
  return a;
}

#ifdef __CUDACC__
__host__ __device__
#endif
inline int reflect(int i, int n) {
  if (n == 1) return 0;
  while (i < 0 || i >= n) i = i < 0 ? -i : 2 * (n - 1) - i;
  return i;
}

// images: [N,H,W,C] uint8; indices: which images form the batch (batch entries); out: [batch,C,H,W].
// position_base + b is the sample position fed to the hash (the caller makes it unique per step).
// Processes batch entries [begin, end) so that callers can split the work across threads.
void augment_batch_cpu(const std::uint8_t* images, const std::int64_t* indices, std::int64_t begin,
                       std::int64_t end, std::int64_t position_base, const AugmentParams& params, float* out);

// The same on the GPU: images and indices in device memory, out in device memory; stream is a
// cudaStream_t. Throws ft::Error when the build has no CUDA.
void augment_batch_cuda(const std::uint8_t* images, const std::int64_t* indices, std::int64_t batch,
                        std::int64_t position_base, const AugmentParams& params, float* out, void* stream);

}  // namespace ft
