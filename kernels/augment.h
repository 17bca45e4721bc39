// Batch assembly for training: gather images by index, colour jitter, random crop (reflect padding),
// horizontal flip, rotation, normalisation, cutout and uint8 NHWC -> float NCHW or NHWC in one pass; a CPU
// version and a CUDA kernel (suffixes: kernels/common.h) sharing the per-pixel rule of augment_pixel.h.
#pragma once

#include <cstdint>

#include "kernels/common.h"

namespace ft {

// The order of the steps is that of the torchvision pipeline ColorJitter(brightness, contrast,
// saturation) -> RandomCrop(padding, reflect) -> RandomHorizontalFlip -> RandomRotation(bilinear,
// fill 0) -> Normalize -> Cutout. Colour jitter applies brightness, contrast, saturation in that order
// (torchvision draws a random order) and has no hue.
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
  // Colour jitter: each factor is drawn uniformly from [max(0, 1 - x), 1 + x]; 0 = off.
  float brightness = 0, contrast = 0, saturation = 0;
  float rotation_degrees = 0;               // angle drawn uniformly from [-deg, deg]; 0 = off
  float mean[3] = {0, 0, 0};                // per channel, pixel units / 255
  float inv_std[3] = {1, 1, 1};
  std::uint64_t seed = 0;                   // per batch; each sample derives its own stream from it
  bool train = true;                        // false: no randomness, normalisation only
  bool nhwc = false;                        // output layout: NCHW planes, or NHWC (channels_last) pixels
};

// Where element (c, y, x) of one sample lands in the output, in the layout params.nhwc asks for.
FT_HOST_DEVICE inline std::int64_t output_offset(const AugmentParams& p, int c, int y, int x) {
  return p.nhwc ? (std::int64_t{y} * p.width + x) * p.channels + c : (std::int64_t{c} * p.height + y) * p.width + x;
}

// The inverse: which (c, y, x) the element at `offset` within one sample's output holds.
FT_HOST_DEVICE inline void output_coords(const AugmentParams& p, std::int64_t offset, int* c, int* y, int* x) {
  const std::int64_t plane = std::int64_t{p.height} * p.width;
  const std::int64_t pixel = p.nhwc ? offset / p.channels : offset % plane;
  *c = static_cast<int>(p.nhwc ? offset % p.channels : offset / plane);
  *y = static_cast<int>(pixel / p.width);
  *x = static_cast<int>(pixel % p.width);
}

// Per-sample random choices, derived from (seed, sample position) — and for alternating flips from the
// image's index — by a counter-based hash so that the CPU and CUDA paths draw identical augmentations.
struct SampleAugment {
  int dy = 0, dx = 0;  // translation
  bool flip = false;
  bool cut = false;
  int cut_y = 0, cut_x = 0;  // cutout top-left; the square may reach outside the image
  float brightness = 1, contrast = 1, saturation = 1;  // jitter factors (1 = unchanged)
  bool rotate = false;
  float cos_a = 1, sin_a = 0;  // counter-clockwise rotation about the image centre
};

FT_HOST_DEVICE inline std::uint64_t mix64(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// A uniform float in [0, 1) from the top 24 bits of a hash.
FT_HOST_DEVICE inline float unit_float(std::uint64_t r) { return static_cast<float>(r >> 40) * (1.0f / 16777216.0f); }

// Factor in [max(0, 1 - spread), 1 + spread] as torchvision's ColorJitter draws it.
FT_HOST_DEVICE inline float jitter_factor(float spread, std::uint64_t r) {
  const float lo = spread < 1.0f ? 1.0f - spread : 0.0f;
  return lo + unit_float(r) * (1.0f + spread - lo);
}

// sin and cos of `radians` (|radians| <= pi) by their Taylor series in double: the same operations on
// host and device, where the libraries' sin/cos may differ in the last bit.
FT_HOST_DEVICE inline void sin_cos(double radians, float* s, float* c) {
  double term_s = radians, term_c = 1.0, sum_s = 0.0, sum_c = 0.0;
  const double x2 = radians * radians;
  for (int k = 0; k < 15; ++k) {
    sum_s += term_s;
    sum_c += term_c;
    term_s = -term_s * x2 / static_cast<double>((2 * k + 2) * (2 * k + 3));
    term_c = -term_c * x2 / static_cast<double>((2 * k + 1) * (2 * k + 2));
  }
  *s = static_cast<float>(sum_s);
  *c = static_cast<float>(sum_c);
}

FT_HOST_DEVICE inline SampleAugment sample_augment(const AugmentParams& p, std::int64_t position, std::int64_t image) {
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
  const std::uint64_t r3 = mix64(r2), r4 = mix64(r3), r5 = mix64(r4), r6 = mix64(r5);
  if (p.brightness > 0) a.brightness = jitter_factor(p.brightness, r3);
  if (p.contrast > 0) a.contrast = jitter_factor(p.contrast, r4);
  if (p.saturation > 0) a.saturation = jitter_factor(p.saturation, r5);
  if (p.rotation_degrees > 0) {
    const float degrees = (2.0f * unit_float(r6) - 1.0f) * p.rotation_degrees;
    a.rotate = true;
    sin_cos(static_cast<double>(degrees) * (3.14159265358979323846 / 180.0), &a.sin_a, &a.cos_a);
  }
  return a;
}

FT_HOST_DEVICE inline int reflect(int i, int n) {
  if (n == 1) return 0;
  while (i < 0 || i >= n) i = i < 0 ? -i : 2 * (n - 1) - i;
  return i;
}

// images: [N,H,W,C] uint8; indices: which images form the batch (batch entries); out: [batch,C,H,W]
// (or [batch,H,W,C] with params.nhwc).
// position_base + b is the sample position fed to the hash (the caller makes it unique per step).
// Processes batch entries [begin, end) so that callers can split the work across threads.
void augment_batch_cpu(const std::uint8_t* images, const std::int64_t* indices, std::int64_t begin,
                       std::int64_t end, std::int64_t position_base, const AugmentParams& params, float* out);

// The same on the GPU over device memory, asynchronous on `stream`. d_scratch: `batch` floats of device
// memory (each sample's mean gray for the contrast jitter); unused, and may be null, without contrast.
void augment_batch_device(const std::uint8_t* d_images, const std::int64_t* d_indices, std::int64_t batch,
                          std::int64_t position_base, const AugmentParams& params, float* d_out, float* d_scratch,
                          cudaStream_t stream);

}  // namespace ft
