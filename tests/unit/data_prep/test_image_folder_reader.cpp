// Tests of the image-folder reader on PNG and JPEG files written with libpng and TurboJPEG: class order,
// file order, exact PNG pixels, JPEG within tolerance, --resize of mixed sizes, and every bad tree.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>

#include "data_prep/image_folder_reader.h"
#include "prep_test_util.h"

namespace ft::prep {
namespace {

using namespace ft::prep::testing;

// train/{cat,dog}, test/{cat,dog} of 4x5 PNGs; gradient seeds: train cat a=1 b=2, dog x=3; test 4, 5.
void write_png_tree(const fs::path& root) {
  write_png(root / "train" / "cat" / "b.png", 4, 5, gradient(4, 5, 2));
  write_png(root / "train" / "cat" / "a.png", 4, 5, gradient(4, 5, 1));
  write_png(root / "train" / "dog" / "x.PNG", 4, 5, gradient(4, 5, 3));
  write_png(root / "test" / "cat" / "t.png", 4, 5, gradient(4, 5, 4));
  write_png(root / "test" / "dog" / "u.png", 4, 5, gradient(4, 5, 5));
}

Bytes image_of(const RawSplit& split, std::int64_t i) {
  const auto begin = split.images.begin() + static_cast<std::ptrdiff_t>(i * split.image_bytes());
  return Bytes(begin, begin + static_cast<std::ptrdiff_t>(split.image_bytes()));
}

TEST(ImageFolderReader, PngFilesAreReadExactlyInInterleavedClassOrder) {
  const fs::path root = scratch_dir();
  write_png_tree(root);
  write_text(root / "train" / "cat" / "notes.txt", "not an image");
  write_png(root / "train" / "cat" / ".hidden.png", 4, 5, gradient(4, 5, 9));
  fs::create_directories(root / "train" / ".cache");
  fs::create_directories(root / "test" / ".cache");

  const RawDataset ds = read_image_folder(root.string());
  EXPECT_EQ(ds.class_names, (std::vector<std::string>{"cat", "dog"}));
  ASSERT_EQ(ds.train.count(), 3);
  ASSERT_EQ(ds.test.count(), 2);
  EXPECT_EQ(ds.train.height, 4);
  EXPECT_EQ(ds.train.width, 5);
  EXPECT_EQ(ds.train.channels, 3);
  // cat/a.png, dog/x.PNG, cat/b.png: each class's first file, then the second ones.
  EXPECT_EQ(ds.train.labels, (std::vector<std::int32_t>{0, 1, 0}));
  EXPECT_EQ(ds.test.labels, (std::vector<std::int32_t>{0, 1}));
  EXPECT_EQ(image_of(ds.train, 0), gradient(4, 5, 1));
  EXPECT_EQ(image_of(ds.train, 1), gradient(4, 5, 3));
  EXPECT_EQ(image_of(ds.train, 2), gradient(4, 5, 2));
  EXPECT_EQ(image_of(ds.test, 1), gradient(4, 5, 5));
  EXPECT_EQ(ds.source_files.size(), 5u);
}

TEST(ImageFolderReader, ClassesOfUnequalSizeInterleaveUntilEachRunsOut) {
  const fs::path root = scratch_dir();
  for (const char* name : {"3.png", "1.png", "2.png"})
    write_png(root / "train" / "big" / name, 1, 1, {1, 2, 3});
  write_png(root / "train" / "small" / "9.png", 1, 1, {4, 5, 6});
  write_png(root / "train" / "tiny" / "0.png", 1, 1, {7, 8, 9});
  for (const char* cls : {"big", "small", "tiny"}) write_png(root / "test" / cls / "t.png", 1, 1, {0, 0, 0});
  const RawDataset ds = read_image_folder(root.string());
  EXPECT_EQ(ds.class_names, (std::vector<std::string>{"big", "small", "tiny"}));
  EXPECT_EQ(ds.train.labels, (std::vector<std::int32_t>{0, 1, 2, 0, 0}));
  EXPECT_EQ(ds.train.images, (Bytes{1, 2, 3, 4, 5, 6, 7, 8, 9, 1, 2, 3, 1, 2, 3}));
  EXPECT_EQ(ds.source_files[3], (root / "train" / "big" / "2.png").string());
}

TEST(ImageFolderReader, JpegFilesDecodeWithinTolerance) {
  const fs::path root = scratch_dir();
  for (const char* split : {"train", "test"})
    for (int k = 0; k < 2; ++k)
      write_file(root / split / ("class" + std::to_string(k)) / "img.jpeg",
                 jpeg_bytes(16, 16, gradient(16, 16, k)));
  const RawDataset ds = read_image_folder(root.string());
  ASSERT_EQ(ds.train.count(), 2);
  for (int k = 0; k < 2; ++k) {
    const Bytes got = image_of(ds.train, k), want = gradient(16, 16, k);
    int worst = 0;
    for (std::size_t i = 0; i < got.size(); ++i) worst = std::max(worst, std::abs(got[i] - want[i]));
    EXPECT_LE(worst, 3) << "class" << k;
  }
}

TEST(ImageFolderReader, ResizeMakesMixedSizesUniform) {
  const fs::path root = scratch_dir();
  write_png(root / "train" / "a" / "1.png", 4, 4, Bytes(4 * 4 * 3, 77));
  write_png(root / "train" / "a" / "2.png", 6, 3, Bytes(6 * 3 * 3, 78));
  write_file(root / "test" / "a" / "3.jpg", jpeg_bytes(8, 8, Bytes(8 * 8 * 3, 120)));
  const RawDataset ds = read_image_folder(root.string(), 5);
  EXPECT_EQ(ds.train.height, 5);
  EXPECT_EQ(ds.train.width, 5);
  EXPECT_EQ(image_of(ds.train, 0), Bytes(75, 77));
  EXPECT_EQ(image_of(ds.train, 1), Bytes(75, 78));
  EXPECT_EQ(ds.test.height, 5);
}

TEST(ImageFolderReader, LimitAndDefaultDatasetName) {
  const fs::path root = scratch_dir() / "pets";
  write_png_tree(root);
  const RawDataset ds = read_image_folder(root.string(), 0, 2);
  EXPECT_EQ(ds.train.labels, (std::vector<std::int32_t>{0, 1}));
  EXPECT_EQ(ds.test.labels, (std::vector<std::int32_t>{0, 1}));
  EXPECT_EQ(default_dataset_name(Format::folder, root.string()), "pets");
  EXPECT_EQ(default_dataset_name(Format::folder, root.string() + "/"), "pets");
}

TEST(ImageFolderReader, ImagesOfDifferentSizesNameBothFiles) {
  const fs::path root = scratch_dir();
  write_png_tree(root / "in");
  write_png(root / "in" / "test" / "dog" / "v.png", 5, 4, gradient(5, 4, 0));
  expect_prep_fails(options_for(Format::folder, root / "in", root / "out"), "test/dog/v.png",
                    "image is 4x5 but");
  expect_prep_fails(options_for(Format::folder, root / "in", root / "out"), "train/cat/a.png",
                    "all images must share one size");
}

TEST(ImageFolderReader, EmptyClassFolderIsNamed) {
  const fs::path root = scratch_dir();
  write_png_tree(root / "in");
  fs::create_directories(root / "in" / "train" / "emu");
  fs::create_directories(root / "in" / "test" / "emu");
  write_text(root / "in" / "train" / "emu" / "readme.txt", "no images yet");
  expect_prep_fails(options_for(Format::folder, root / "in", root / "out"), "train/emu",
                    "class folder has no .jpg, .jpeg or .png images");
}

TEST(ImageFolderReader, UndecodableImagesAreNamed) {
  const fs::path root = scratch_dir();
  write_png_tree(root / "in");
  write_text(root / "in" / "train" / "dog" / "y.jpg", "this is not a JPEG");
  expect_prep_fails(options_for(Format::folder, root / "in", root / "out"), "train/dog/y.jpg",
                    "cannot decode: neither a JPEG nor a PNG");

  Bytes jpeg = jpeg_bytes(16, 16, gradient(16, 16, 0));
  jpeg.resize(jpeg.size() / 2);
  write_file(root / "in" / "train" / "dog" / "y.jpg", jpeg);
  expect_prep_fails(options_for(Format::folder, root / "in", root / "out"), "train/dog/y.jpg",
                    "cannot decode JPEG");

  fs::remove(root / "in" / "train" / "dog" / "y.jpg");
  const fs::path png = root / "in" / "test" / "cat" / "t.png";
  fs::resize_file(png, fs::file_size(png) - 20);
  expect_prep_fails(options_for(Format::folder, root / "in", root / "out"), "test/cat/t.png",
                    "cannot decode PNG");
}

TEST(ImageFolderReader, TestClassesMustMatchTrainClasses) {
  const fs::path root = scratch_dir();
  write_png_tree(root / "in");
  fs::remove_all(root / "in" / "test" / "dog");
  expect_prep_fails(options_for(Format::folder, root / "in", root / "out"), "in/test",
                    "has no class folder 'dog'");
  write_png(root / "in" / "test" / "dog" / "u.png", 4, 5, gradient(4, 5, 5));
  write_png(root / "in" / "test" / "eel" / "u.png", 4, 5, gradient(4, 5, 5));
  expect_prep_fails(options_for(Format::folder, root / "in", root / "out"), "in/test",
                    "has class folder 'eel' that");
}

TEST(ImageFolderReader, MissingSplitFolderIsNamed) {
  const fs::path root = scratch_dir();
  write_png_tree(root / "in");
  fs::remove_all(root / "in" / "test");
  expect_prep_fails(options_for(Format::folder, root / "in", root / "out"), "in/test",
                    "input directory does not exist");
}

}  // namespace
}  // namespace ft::prep
