// Tests of the pixel transforms: resizing keeps constant images constant in every direction, matches
// hand-computed bilinear and area-average values, and grayscale conversion of a split follows BT.601.
#include <gtest/gtest.h>

#include "data_prep/transforms.h"
#include "prep_test_util.h"

namespace ft::prep {
namespace {

using testing::Bytes;

TEST(Transforms, ResizeOfAConstantImageStaysConstant) {
  const int sizes[] = {1, 2, 3, 5, 7, 28, 32, 96, 128};
  for (int h : {1, 3, 28, 96})
    for (int w : {1, 5, 32})
      for (int out : sizes)
        for (std::uint8_t value : {std::uint8_t{0}, std::uint8_t{1}, std::uint8_t{173}, std::uint8_t{255}}) {
          const Bytes image(static_cast<std::size_t>(h) * w * 3, value);
          const Bytes resized = resize_image(image.data(), h, w, 3, out, out);
          ASSERT_EQ(resized.size(), static_cast<std::size_t>(out) * out * 3);
          EXPECT_EQ(resized, Bytes(resized.size(), value))
              << h << "x" << w << " -> " << out << " value " << int{value};
        }
}

TEST(Transforms, BilinearTwoByTwoToFourByFour) {
  // Half-pixel centres: output x samples source (x + 0.5) / 2 - 0.5 = -0.25, 0.25, 0.75, 1.25 (clamped),
  // so each row a b becomes a, 3a/4 + b/4, a/4 + 3b/4, b.
  const Bytes image = {0, 64, 128, 192};
  const Bytes want = {0,   16,  48,  64,   //
                      32,  48,  80,  96,   //
                      96,  112, 144, 160,  //
                      128, 144, 176, 192};
  EXPECT_EQ(resize_image(image.data(), 2, 2, 1, 4, 4), want);
}

TEST(Transforms, BilinearKeepsChannelsApart) {
  const Bytes image = {10, 200, 0, 30, 100, 4};                         // 1x2 pixels, 3 channels
  const Bytes want = {10, 200, 0, 15, 175, 1, 25, 125, 3, 30, 100, 4};  // 1x4, rounding 0.75*0+0.25*4=1
  EXPECT_EQ(resize_image(image.data(), 1, 2, 3, 1, 4), want);
}

TEST(Transforms, ShrinkingAveragesEachFootprint) {
  const Bytes image = {0,  10, 20, 30,  //
                       40, 50, 60, 70,  //
                       1,  1,  3,  3,   //
                       5,  5,  7,  8};
  // 4x4 -> 2x2: each output is the mean of a 2x2 block, rounded (21 / 4 = 5.25 -> 5).
  EXPECT_EQ(resize_image(image.data(), 4, 4, 1, 2, 2), (Bytes{25, 45, 3, 5}));
  // 3 -> 2 along one axis: footprints [0, 1.5) and [1.5, 3) weigh the middle pixel by one third.
  const Bytes row = {0, 90, 180};
  EXPECT_EQ(resize_image(row.data(), 1, 3, 1, 1, 2), (Bytes{30, 150}));
}

TEST(Transforms, SameSizeIsTheIdentity) {
  Bytes image(7 * 9 * 3);
  for (std::size_t i = 0; i < image.size(); ++i) image[i] = static_cast<std::uint8_t>(i * 37);
  EXPECT_EQ(resize_image(image.data(), 7, 9, 3, 7, 9), image);
}

TEST(Transforms, ResizeSplitResizesEveryImage) {
  RawSplit split;
  split.reset(2, 2, 1, 2);
  split.images = {0, 64, 128, 192, 9, 9, 9, 9};
  split.labels = {0, 1};
  resize_split(split, 4);
  EXPECT_EQ(split.height, 4);
  EXPECT_EQ(split.width, 4);
  ASSERT_EQ(split.images.size(), 32u);
  EXPECT_EQ(split.images[5], 48);
  EXPECT_EQ(Bytes(split.images.begin() + 16, split.images.end()), Bytes(16, 9));
}

TEST(Transforms, GrayscaleSplitUsesBt601AndLeavesGrayAlone) {
  RawSplit split;
  split.reset(1, 3, 3, 1);
  split.images = {255, 0, 0, 0, 255, 0, 10, 20, 30};
  split.labels = {4};
  grayscale_split(split);
  EXPECT_EQ(split.channels, 1);
  // round(0.299*255) = 76, round(0.587*255) = 150, round(2.99 + 11.74 + 3.42) = 18
  EXPECT_EQ(split.images, (Bytes{76, 150, 18}));
  grayscale_split(split);
  EXPECT_EQ(split.images, (Bytes{76, 150, 18}));
}

}  // namespace
}  // namespace ft::prep
