// The per-output-pixel rule of batch augmentation, shared verbatim by the CPU loop and the CUDA kernel
// so that both produce bit-identical batches from the same seed (augment.cu is built without FMA).
#pragma once

#include <cmath>

#include "kernels/augment.h"

namespace ft {

FT_HOST_DEVICE inline float clamp01(float v) { return v < 0.0f ? 0.0f : (v > 1.0f ? 1.0f : v); }

// torchvision's _blend: factor * v + (1 - factor) * other, clamped to [0, 1].
FT_HOST_DEVICE inline float blend(float v, float other, float factor) {
  return clamp01(factor * v + (1.0f - factor) * other);
}

// Gray level of an RGB pixel in [0, 1] with torchvision's rgb_to_grayscale weights.
FT_HOST_DEVICE inline float gray_level(float r, float g, float b) { return 0.2989f * r + 0.587f * g + 0.114f * b; }

// Mean gray level of the brightness-adjusted image: what the contrast jitter blends towards.
FT_HOST_DEVICE inline float contrast_mean(const std::uint8_t* image, const AugmentParams& p, const SampleAugment& a) {
  if (a.contrast == 1.0f) return 0.0f;
  const std::int64_t pixels = std::int64_t{p.height} * p.width;
  double sum = 0.0;
  for (std::int64_t i = 0; i < pixels; ++i) {
    const std::uint8_t* px = image + i * p.channels;
    const float r = blend(px[0] * (1.0f / 255.0f), 0.0f, a.brightness);
    if (p.channels != 3) {
      sum += r;
      continue;
    }
    const float g = blend(px[1] * (1.0f / 255.0f), 0.0f, a.brightness);
    const float b = blend(px[2] * (1.0f / 255.0f), 0.0f, a.brightness);
    sum += gray_level(r, g, b);
  }
  return static_cast<float>(sum / static_cast<double>(pixels));
}

// Channel c of stored pixel (sy, sx) in [0, 1] after brightness, contrast (towards `mean`, from
// contrast_mean) and saturation (towards the pixel's gray level; 3-channel images only).
FT_HOST_DEVICE inline float jittered(const std::uint8_t* image, const AugmentParams& p, const SampleAugment& a,
                                     float mean, int sy, int sx, int c) {
  const std::uint8_t* px = image + (static_cast<std::int64_t>(sy) * p.width + sx) * p.channels;
  if (a.brightness == 1.0f && a.contrast == 1.0f && a.saturation == 1.0f) return px[c] * (1.0f / 255.0f);
  const int n = p.channels == 3 ? 3 : 1;
  float v[3];
  for (int k = 0; k < n; ++k) {
    const int channel = n == 3 ? k : c;
    v[k] = blend(blend(px[channel] * (1.0f / 255.0f), 0.0f, a.brightness), mean, a.contrast);
  }
  if (n == 3 && a.saturation != 1.0f) {
    const float gray = gray_level(v[0], v[1], v[2]);
    for (int k = 0; k < 3; ++k) v[k] = blend(v[k], gray, a.saturation);
  }
  return v[n == 3 ? c : 0];
}

// Channel c at (y, x) of the jittered, translated (reflect padding) and flipped image in [0, 1].
FT_HOST_DEVICE inline float shifted(const std::uint8_t* image, const AugmentParams& p, const SampleAugment& a,
                                    float mean, int c, int y, int x) {
  const int sy = reflect(y + a.dy, p.height);
  int sx = reflect(x + a.dx, p.width);
  if (a.flip) sx = p.width - 1 - sx;
  return jittered(image, p, a, mean, sy, sx, c);
}

// The same at integer (y, x) that may lie outside the image, where rotation fills 0.
FT_HOST_DEVICE inline float shifted_or_fill(const std::uint8_t* image, const AugmentParams& p,
                                            const SampleAugment& a, float mean, int c, int y, int x) {
  if (y < 0 || y >= p.height || x < 0 || x >= p.width) return 0.0f;
  return shifted(image, p, a, mean, c, y, x);
}

// Rotation about the image centre by inverse mapping with bilinear interpolation: output (y, x) reads
// the shifted image at the point that the rotation carries onto it.
FT_HOST_DEVICE inline float rotated(const std::uint8_t* image, const AugmentParams& p, const SampleAugment& a,
                                    float mean, int c, int y, int x) {
  const float cy = 0.5f * static_cast<float>(p.height - 1), cx = 0.5f * static_cast<float>(p.width - 1);
  const float ox = static_cast<float>(x) - cx, oy = static_cast<float>(y) - cy;
  const float fx = cx + a.cos_a * ox - a.sin_a * oy;
  const float fy = cy + a.sin_a * ox + a.cos_a * oy;
  const float x0f = floorf(fx), y0f = floorf(fy);
  const float wx = fx - x0f, wy = fy - y0f;
  const int x0 = static_cast<int>(x0f), y0 = static_cast<int>(y0f);
  const float top = (1.0f - wx) * shifted_or_fill(image, p, a, mean, c, y0, x0) +
                    wx * shifted_or_fill(image, p, a, mean, c, y0, x0 + 1);
  const float bottom = (1.0f - wx) * shifted_or_fill(image, p, a, mean, c, y0 + 1, x0) +
                       wx * shifted_or_fill(image, p, a, mean, c, y0 + 1, x0 + 1);
  return (1.0f - wy) * top + wy * bottom;
}

// Normalised output value of channel c at (y, x); `mean` is contrast_mean(image, p, a).
FT_HOST_DEVICE inline float augmented_pixel(const std::uint8_t* image, const AugmentParams& p, const SampleAugment& a,
                                            float mean, int c, int y, int x) {
  if (a.cut && y >= a.cut_y && y < a.cut_y + p.cutout && x >= a.cut_x && x < a.cut_x + p.cutout)
    return 0.0f;
  const float v = a.rotate ? rotated(image, p, a, mean, c, y, x) : shifted(image, p, a, mean, c, y, x);
  return (v - p.mean[c]) * p.inv_std[c];
}

}  // namespace ft
