// Tests of the colour jitter and rotation rules against CPU references written from torchvision's
// formulas: factor 1 is the identity, saturation 0 gives gray, contrast 0 gives the mean gray, and a
// rotation by 90 or 180 degrees moves pixels exactly; the CUDA kernel agrees bit for bit when present.
#include <ATen/ATen.h>
#include <ATen/DeviceAccelerator.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "kernels/augment.h"
#include "kernels/augment_pixel.h"

namespace ft {
namespace {

constexpr int kSide = 6, kChannels = 3;

struct Image {
  std::vector<std::uint8_t> pixels = std::vector<std::uint8_t>(kSide * kSide * kChannels);
  Image() {
    for (std::size_t i = 0; i < pixels.size(); ++i) pixels[i] = static_cast<std::uint8_t>((i * 53 + 7) % 256);
  }
  // Pixel units as the rule scales them (a multiplication by 1/255, which can differ from / 255 in the last bit).
  float at(int y, int x, int c) const { return pixels[(y * kSide + x) * kChannels + c] * (1.0f / 255.0f); }
};

AugmentParams square_params() {
  AugmentParams p;
  p.height = p.width = kSide;
  p.channels = kChannels;
  return p;
}

// Output channel c at (y, x) for hand-made choices `a` (normalisation off: values in [0, 1]).
float out(const Image& img, const AugmentParams& p, const SampleAugment& a, int c, int y, int x) {
  return augmented_pixel(img.pixels.data(), p, a, contrast_mean(img.pixels.data(), p, a), c, y, x);
}

TEST(ColorJitter, FactorOneIsTheIdentity) {
  const Image img;
  auto p = square_params();
  p.brightness = p.contrast = p.saturation = 0.5f;
  const SampleAugment a;  // every factor 1
  for (int c = 0; c < kChannels; ++c)
    for (int y = 0; y < kSide; ++y)
      for (int x = 0; x < kSide; ++x) EXPECT_EQ(out(img, p, a, c, y, x), img.at(y, x, c));
}

TEST(ColorJitter, BrightnessScalesAndClamps) {
  const Image img;
  const auto p = square_params();
  SampleAugment a;
  a.brightness = 1.5f;
  for (int c = 0; c < kChannels; ++c)
    for (int y = 0; y < kSide; ++y)
      for (int x = 0; x < kSide; ++x)
        EXPECT_FLOAT_EQ(out(img, p, a, c, y, x), std::min(1.0f, 1.5f * img.at(y, x, c)));
}

TEST(ColorJitter, SaturationZeroGivesGray) {
  const Image img;
  const auto p = square_params();
  SampleAugment a;
  a.saturation = 0.0f;
  for (int y = 0; y < kSide; ++y)
    for (int x = 0; x < kSide; ++x) {
      const float gray = 0.2989f * img.at(y, x, 0) + 0.587f * img.at(y, x, 1) + 0.114f * img.at(y, x, 2);
      for (int c = 0; c < kChannels; ++c) EXPECT_NEAR(out(img, p, a, c, y, x), gray, 1e-6);
    }
}

TEST(ColorJitter, ContrastZeroGivesTheMeanGrayAndHalfWayBlends) {
  const Image img;
  const auto p = square_params();
  double sum = 0;
  for (int y = 0; y < kSide; ++y)
    for (int x = 0; x < kSide; ++x)
      sum += 0.2989 * img.at(y, x, 0) + 0.587 * img.at(y, x, 1) + 0.114 * img.at(y, x, 2);
  const double mean = sum / (kSide * kSide);
  SampleAugment a;
  a.contrast = 0.0f;
  EXPECT_NEAR(out(img, p, a, 1, 2, 3), mean, 1e-6);
  a.contrast = 0.5f;
  for (int c = 0; c < kChannels; ++c)
    EXPECT_NEAR(out(img, p, a, c, 4, 1), 0.5 * img.at(4, 1, c) + 0.5 * mean, 1e-6);
}

TEST(ColorJitter, DrawsStayInTheirRangesAndVary) {
  auto p = square_params();
  p.brightness = 0.2f;
  p.contrast = 1.5f;
  p.seed = 7;
  float lo = 10, hi = -10;
  for (std::int64_t pos = 0; pos < 500; ++pos) {
    const auto a = sample_augment(p, pos, 0);
    EXPECT_GE(a.brightness, 0.8f);
    EXPECT_LE(a.brightness, 1.2f);
    EXPECT_GE(a.contrast, 0.0f);
    EXPECT_LE(a.contrast, 2.5f);
    EXPECT_EQ(a.saturation, 1.0f);
    lo = std::min(lo, a.brightness), hi = std::max(hi, a.brightness);
  }
  EXPECT_LT(lo, 0.85f);
  EXPECT_GT(hi, 1.15f);
}

TEST(RandomRotation, NinetyDegreesMovesEveryPixelExactly) {
  const Image img;
  const auto p = square_params();
  SampleAugment a;
  a.rotate = true;
  a.cos_a = 0.0f;
  a.sin_a = 1.0f;  // counter-clockwise: the top-right corner comes to the top-left
  for (int c = 0; c < kChannels; ++c)
    for (int y = 0; y < kSide; ++y)
      for (int x = 0; x < kSide; ++x) EXPECT_EQ(out(img, p, a, c, y, x), img.at(x, kSide - 1 - y, c));
}

TEST(RandomRotation, HalfTurnOfANonSquareImage) {
  std::vector<std::uint8_t> pixels(4 * 7);
  for (std::size_t i = 0; i < pixels.size(); ++i) pixels[i] = static_cast<std::uint8_t>(i * 9);
  AugmentParams p;
  p.height = 4, p.width = 7, p.channels = 1;
  SampleAugment a;
  a.rotate = true;
  a.cos_a = -1.0f;
  a.sin_a = 0.0f;
  for (int y = 0; y < 4; ++y)
    for (int x = 0; x < 7; ++x)
      EXPECT_EQ(augmented_pixel(pixels.data(), p, a, 0.0f, 0, y, x), pixels[(3 - y) * 7 + (6 - x)] * (1.0f / 255.0f));
}

TEST(RandomRotation, BilinearInsideAndZeroFillOutside) {
  const Image img;
  const auto p = square_params();
  SampleAugment a;
  a.rotate = true;
  sin_cos(std::acos(-1.0) / 4, &a.sin_a, &a.cos_a);  // 45 degrees
  EXPECT_EQ(out(img, p, a, 0, 0, 0), 0.0f);           // a corner comes from outside the image
  // Pixel (3, 3) reads its four neighbours around the rotated point with bilinear weights.
  const float cx = 2.5f, ox = 3 - cx, oy = 3 - cx;
  const float fx = cx + a.cos_a * ox - a.sin_a * oy, fy = cx + a.sin_a * ox + a.cos_a * oy;
  const int x0 = static_cast<int>(std::floor(fx)), y0 = static_cast<int>(std::floor(fy));
  const float wx = fx - x0, wy = fy - y0;
  const float expect = (1 - wy) * ((1 - wx) * img.at(y0, x0, 2) + wx * img.at(y0, x0 + 1, 2)) +
                       wy * ((1 - wx) * img.at(y0 + 1, x0, 2) + wx * img.at(y0 + 1, x0 + 1, 2));
  EXPECT_NEAR(out(img, p, a, 2, 3, 3), expect, 1e-6);
}

TEST(RandomRotation, AnglesAreDrawnWithinTheLimitAndSinCosIsAccurate) {
  auto p = square_params();
  p.rotation_degrees = 30;
  for (std::int64_t pos = 0; pos < 200; ++pos) {
    const auto a = sample_augment(p, pos, 0);
    ASSERT_TRUE(a.rotate);
    EXPECT_GE(a.cos_a, std::cos(30 * std::acos(-1.0) / 180) - 1e-6);
    EXPECT_NEAR(a.cos_a * a.cos_a + a.sin_a * a.sin_a, 1.0f, 1e-6);
  }
  for (double x = -3.14159; x <= 3.1416; x += 0.01) {
    float s = 0, c = 0;
    sin_cos(x, &s, &c);
    EXPECT_NEAR(s, std::sin(x), 1e-6);
    EXPECT_NEAR(c, std::cos(x), 1e-6);
  }
}

TEST(ColorJitterAndRotation, CudaKernelMatchesTheCpuBitForBit) {
  if (!cuda_kernels_available()) GTEST_SKIP() << "no CUDA build or no visible GPU";
  const Image img;
  std::vector<std::uint8_t> images;
  for (int i = 0; i < 3; ++i) images.insert(images.end(), img.pixels.begin(), img.pixels.end());
  images[5] = 255;
  auto p = square_params();
  p.crop_padding = 2, p.flip = true, p.cutout = 2;
  p.brightness = p.contrast = p.saturation = 0.5f;
  p.rotation_degrees = 40;
  p.mean[1] = 0.5f, p.inv_std[2] = 3.0f;
  p.seed = 1234;
  const std::vector<std::int64_t> idx = {2, 0, 1, 1, 0, 2, 2, 1};
  const auto batch = static_cast<std::int64_t>(idx.size());
  std::vector<float> cpu(idx.size() * kSide * kSide * kChannels);
  augment_batch_cpu(images.data(), idx.data(), 0, batch, 50, p, cpu.data());

  const auto d_images = at::tensor(at::ArrayRef<std::uint8_t>(images)).to(at::kCUDA);
  const auto d_idx = at::tensor(at::ArrayRef<std::int64_t>(idx)).to(at::kCUDA);
  auto d_out = at::empty({static_cast<std::int64_t>(cpu.size())}, d_images.options().dtype(at::kFloat));
  auto scratch = at::empty({batch}, d_out.options());
  const auto stream = at::accelerator::getCurrentStream(0);
  augment_batch_device(d_images.data_ptr<std::uint8_t>(), d_idx.data_ptr<std::int64_t>(), batch, 50, p,
                       d_out.data_ptr<float>(), scratch.data_ptr<float>(),
                       static_cast<cudaStream_t>(stream.native_handle()));
  const auto gpu = d_out.cpu();
  EXPECT_TRUE(std::equal(cpu.begin(), cpu.end(), gpu.data_ptr<float>()));
}

}  // namespace
}  // namespace ft
