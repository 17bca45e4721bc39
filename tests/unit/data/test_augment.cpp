// Tests of batch assembly on the CPU: exact normalisation, flips, reflect-padded translation, cutout,
// and that augmentation draws depend only on (seed, position), never on the thread split.
#include <gtest/gtest.h>

#include <vector>

#include "kernels/augment.h"
#include "kernels/augment_pixel.h"

namespace ft {
namespace {

struct Fixture {
  static constexpr int H = 5, W = 6, C = 3;
  std::vector<std::uint8_t> images = std::vector<std::uint8_t>(2 * H * W * C);
  Fixture() {
    for (std::size_t i = 0; i < images.size(); ++i) images[i] = static_cast<std::uint8_t>((i * 37) % 251);
  }
  std::uint8_t at(int n, int y, int x, int c) const { return images[((n * H + y) * W + x) * C + c]; }
  AugmentParams params() const {
    AugmentParams p;
    p.height = H;
    p.width = W;
    p.channels = C;
    return p;
  }
  std::vector<float> run(const AugmentParams& p, std::vector<std::int64_t> idx, std::int64_t base = 0) const {
    std::vector<float> out(idx.size() * H * W * C, -99.0f);
    augment_batch_cpu(images.data(), idx.data(), 0, static_cast<std::int64_t>(idx.size()), base, p, out.data());
    return out;
  }
};

TEST(Augment, NormalisationAndLayoutAreExact) {
  Fixture f;
  auto p = f.params();
  p.train = false;
  for (int c = 0; c < 3; ++c) p.mean[c] = 0.25f * c, p.inv_std[c] = 2.0f + c;
  const auto out = f.run(p, {1, 0});
  for (int c = 0; c < 3; ++c)
    for (int y = 0; y < Fixture::H; ++y)
      for (int x = 0; x < Fixture::W; ++x) {
        const float expect = (f.at(1, y, x, c) / 255.0f - p.mean[c]) * p.inv_std[c];
        EXPECT_NEAR(out[(c * Fixture::H + y) * Fixture::W + x], expect, 1e-6);
      }
}

// channels_last batches are written in place: every augmentation draws the same values, only the
// addresses differ (NHWC: channel fastest).
TEST(Augment, NhwcOutputHoldsTheSameValuesAsNchw) {
  Fixture f;
  auto p = f.params();
  p.crop_padding = 2, p.flip = true, p.cutout = 2, p.brightness = 0.3f, p.contrast = 0.3f, p.saturation = 0.3f;
  p.rotation_degrees = 15, p.seed = 99;
  for (int c = 0; c < 3; ++c) p.mean[c] = 0.1f * c, p.inv_std[c] = 1.5f;
  const auto nchw = f.run(p, {1, 0, 1}, 7);
  p.nhwc = true;
  const auto nhwc = f.run(p, {1, 0, 1}, 7);
  constexpr int H = Fixture::H, W = Fixture::W, C = Fixture::C;
  for (int b = 0; b < 3; ++b)
    for (int c = 0; c < C; ++c)
      for (int y = 0; y < H; ++y)
        for (int x = 0; x < W; ++x)
          ASSERT_EQ(nhwc[((b * H + y) * W + x) * C + c], nchw[((b * C + c) * H + y) * W + x])
              << b << " " << c << " " << y << " " << x;
  for (std::int64_t i = 0; i < H * W * C; ++i) {
    int c = 0, y = 0, x = 0;
    output_coords(p, i, &c, &y, &x);
    ASSERT_EQ(output_offset(p, c, y, x), i);
  }
}

TEST(Augment, FlipMirrorsColumns) {
  Fixture f;
  auto p = f.params();
  p.flip = true;
  // Find a position whose draw flips, then check the mirror.
  for (std::int64_t pos = 0; pos < 64; ++pos) {
    if (!sample_augment(p, pos, 0).flip) continue;
    const auto out = f.run(p, {0}, pos);
    for (int y = 0; y < Fixture::H; ++y)
      for (int x = 0; x < Fixture::W; ++x)
        EXPECT_FLOAT_EQ(out[y * Fixture::W + x], f.at(0, y, Fixture::W - 1 - x, 0) / 255.0f);
    return;
  }
  FAIL() << "no flip drawn in 64 positions";
}

// Alternating flips: a fixed half of the images flips in epoch 1, exactly the others in epoch 2, the
// first half again in epoch 3, whatever position (batch seed) each image is drawn at.
TEST(Augment, AlternatingFlipsSwapEveryEpoch) {
  Fixture f;
  auto p = f.params();
  p.flip = true;
  p.alternate_flip = true;
  p.image_seed = 42;
  int flipped_first = 0;
  for (std::int64_t image = 0; image < 200; ++image) {
    p.epoch = 1;
    const bool first = sample_augment(p, image * 7, image).flip;
    EXPECT_EQ(sample_augment(p, image * 7 + 1000, image).flip, first) << "depends on the position";
    p.epoch = 2;
    EXPECT_NE(sample_augment(p, image * 3, image).flip, first) << "image " << image;
    p.epoch = 3;
    EXPECT_EQ(sample_augment(p, image * 5, image).flip, first) << "image " << image;
    flipped_first += first;
  }
  EXPECT_GT(flipped_first, 70);
  EXPECT_LT(flipped_first, 130);
  // The kernel applies it: image 0 comes out mirrored in exactly one of two consecutive epochs.
  p.epoch = 1;
  const auto one = f.run(p, {0}, 11);
  p.epoch = 2;
  const auto two = f.run(p, {0}, 12);
  const auto& mirrored = sample_augment(p, 12, 0).flip ? two : one;
  const auto& plain = sample_augment(p, 12, 0).flip ? one : two;
  for (int y = 0; y < Fixture::H; ++y)
    for (int x = 0; x < Fixture::W; ++x) {
      EXPECT_FLOAT_EQ(plain[y * Fixture::W + x], f.at(0, y, x, 0) / 255.0f);
      EXPECT_FLOAT_EQ(mirrored[y * Fixture::W + x], f.at(0, y, Fixture::W - 1 - x, 0) / 255.0f);
    }
}

TEST(Augment, TranslationUsesReflectPadding) {
  Fixture f;
  auto p = f.params();
  p.crop_padding = 2;
  bool seen_shift = false;
  for (std::int64_t pos = 0; pos < 32; ++pos) {
    const auto a = sample_augment(p, pos, 1);
    EXPECT_LE(std::abs(a.dy), 2);
    EXPECT_LE(std::abs(a.dx), 2);
    const auto out = f.run(p, {1}, pos);
    for (int y = 0; y < Fixture::H; ++y)
      for (int x = 0; x < Fixture::W; ++x)
        EXPECT_FLOAT_EQ(out[(2 * Fixture::H + y) * Fixture::W + x],
                        f.at(1, reflect(y + a.dy, Fixture::H), reflect(x + a.dx, Fixture::W), 2) / 255.0f);
    seen_shift = seen_shift || a.dx != 0 || a.dy != 0;
  }
  EXPECT_TRUE(seen_shift);
  EXPECT_EQ(reflect(-1, 5), 1);
  EXPECT_EQ(reflect(5, 5), 3);
  EXPECT_EQ(reflect(-2, 5), 2);
}

TEST(Augment, CutoutZeroesASquare) {
  Fixture f;
  auto p = f.params();
  p.cutout = 2;
  for (int c = 0; c < 3; ++c) p.mean[c] = 0.5f;
  const auto a = sample_augment(p, 5, 0);
  ASSERT_TRUE(a.cut);
  const auto out = f.run(p, {0}, 5);
  int zeros = 0;
  for (int y = 0; y < Fixture::H; ++y)
    for (int x = 0; x < Fixture::W; ++x) {
      const bool inside = y >= a.cut_y && y < a.cut_y + 2 && x >= a.cut_x && x < a.cut_x + 2;
      if (inside) {
        EXPECT_EQ(out[y * Fixture::W + x], 0.0f);
        ++zeros;
      }
    }
  EXPECT_GT(zeros, 0);
}

TEST(Augment, DrawsDependOnlyOnSeedAndPosition) {
  Fixture f;
  auto p = f.params();
  p.crop_padding = 1;
  p.flip = true;
  p.seed = 99;
  p.brightness = 0.4f;
  p.contrast = 0.4f;
  p.saturation = 0.4f;
  p.rotation_degrees = 30;
  const auto whole = f.run(p, {0, 1, 1, 0}, 100);
  std::vector<float> split(whole.size(), -1.0f);
  const std::vector<std::int64_t> idx = {0, 1, 1, 0};
  augment_batch_cpu(f.images.data(), idx.data(), 2, 4, 100, p, split.data());
  augment_batch_cpu(f.images.data(), idx.data(), 0, 2, 100, p, split.data());
  EXPECT_EQ(whole, split);
  p.seed = 100;
  EXPECT_NE(whole, f.run(p, {0, 1, 1, 0}, 100));
}

}  // namespace
}  // namespace ft
