// Tests of how image files reach a network's input: the size policy (resize or refuse, naming the file),
// prep's resize and BT.601 gray applied exactly, the resize summary, and corrupt files named.
#include <gtest/gtest.h>

#include "data_prep/image_batch.h"
#include "data_prep/transforms.h"
#include "error_of.h"
#include "kernels/rgb_to_gray.h"
#include "prep_test_util.h"

namespace ft::prep {
namespace {

using namespace testing;

using test::error_of;

TEST(ImageSizePolicy, SameSizePassesOtherSizeResizesOrIsRefused) {
  const ImageShape target{28, 28, 1};
  EXPECT_FALSE(needs_resize(28, 28, target, false, "a.png"));
  EXPECT_FALSE(needs_resize(28, 28, target, true, "a.png"));
  EXPECT_TRUE(needs_resize(48, 64, target, true, "b.jpg"));
  const std::string message = error_of([&] { needs_resize(48, 64, target, false, "dir/b.jpg"); });
  EXPECT_NE(message.find("dir/b.jpg: image is 64x48 but the network takes 28x28"), std::string::npos) << message;
}

TEST(ImageBatchLoader, RefusesNetworksOfOtherThanOneOrThreeChannels) {
  EXPECT_NE(error_of([] { ImageBatchLoader({8, 8, 2}, true); }).find("2-channel"), std::string::npos);
}

TEST(ImageBatchLoader, OneChannelNetworkGetsPrepsGrayAndThreeChannelsTheRgb) {
  const auto dir = scratch_dir();
  const Bytes rgb = gradient(5, 4, 1);
  write_png(dir / "a.png", 5, 4, rgb);
  const std::vector<std::string> files = {(dir / "a.png").string(), (dir / "a.png").string()};

  ImageBatchLoader gray({5, 4, 1}, false);
  const RawSplit g = gray.load(files);
  Bytes expect(20);
  rgb_to_gray_cpu(rgb.data(), expect.data(), expect.size());
  expect.insert(expect.end(), expect.begin(), expect.end());
  EXPECT_EQ(g.channels, 1);
  EXPECT_EQ(g.count(), 2);
  EXPECT_EQ(g.images, expect);

  ImageBatchLoader color({5, 4, 3}, false);
  const RawSplit c = color.load({files[0]});
  EXPECT_EQ(c.images, rgb);
  EXPECT_EQ(color.resize_note(), "");
}

TEST(ImageBatchLoader, ResizesWithPrepsResizeThenGraysAndSummarisesTheSizes) {
  const auto dir = scratch_dir();
  const Bytes big = gradient(12, 10, 2), small = gradient(3, 3, 3);
  write_png(dir / "big.png", 12, 10, big);
  write_png(dir / "small.png", 3, 3, small);
  ImageBatchLoader loader({6, 6, 1}, true);
  const RawSplit out = loader.load({(dir / "big.png").string(), (dir / "small.png").string(),
                                    (dir / "big.png").string()});
  const Bytes resized = resize_image(big.data(), 12, 10, 3, 6, 6);
  Bytes expect(36);
  rgb_to_gray_cpu(resized.data(), expect.data(), expect.size());
  EXPECT_EQ(Bytes(out.images.begin(), out.images.begin() + 36), expect);
  EXPECT_EQ(loader.resized_count(), 3);
  EXPECT_EQ(loader.resize_note(), "resized 3 images to 6x6: 1 of 3x3, 2 of 10x12");

  ImageBatchLoader strict({6, 6, 1}, false);
  const std::string message = error_of([&] { strict.load({(dir / "big.png").string()}); });
  EXPECT_NE(message.find("big.png: image is 10x12 but the network takes 6x6"), std::string::npos) << message;
}

TEST(ImageBatchLoader, CorruptAndUnknownFilesAreNamed) {
  const auto dir = scratch_dir();
  Bytes png_head = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n', 0, 0, 0, 13};
  write_file(dir / "broken.png", png_head);
  write_text(dir / "notes.jpg", "not an image");
  ImageBatchLoader loader({4, 4, 3}, true);
  EXPECT_NE(error_of([&] { loader.load({(dir / "broken.png").string()}); }).find("broken.png: cannot decode PNG"),
            std::string::npos);
  EXPECT_NE(error_of([&] { loader.load({(dir / "notes.jpg").string()}); }).find("notes.jpg: cannot decode"),
            std::string::npos);
  EXPECT_NE(error_of([&] { loader.load({(dir / "absent.png").string()}); }).find("absent.png: cannot open"),
            std::string::npos);
}

}  // namespace
}  // namespace ft::prep
