// Tests of the STL-10 binary reader on files synthesized in the official layout: channel-major planes
// stored column-major (byte c*96*96 + x*96 + y is row y, column x), labels 1..10 shifted to 0..9.
#include <gtest/gtest.h>

#include "data_prep/stl10_reader.h"
#include "prep_test_util.h"

namespace ft::prep {
namespace {

using namespace ft::prep::testing;

constexpr int kSide = 96;

std::uint8_t pixel(int id, int y, int x, int c) {
  return static_cast<std::uint8_t>(id * 17 + c * 70 + y + 3 * x);
}

// Images in the release layout: for each image, for each channel, columns one after another.
Bytes images_file(const std::vector<int>& ids) {
  Bytes out;
  for (int id : ids)
    for (int c = 0; c < 3; ++c)
      for (int x = 0; x < kSide; ++x)
        for (int y = 0; y < kSide; ++y) out.push_back(pixel(id, y, x, c));
  return out;
}

void write_stl10(const fs::path& dir) {
  write_file(dir / "train_X.bin", images_file({0, 1, 2}));
  write_file(dir / "train_y.bin", {1, 10, 4});
  write_file(dir / "test_X.bin", images_file({3, 4}));
  write_file(dir / "test_y.bin", {2, 9});
}

TEST(Stl10Reader, ColumnMajorPlanesBecomeRowMajorNhwc) {
  const fs::path root = scratch_dir();
  write_stl10(root / "stl10_binary");
  const RawDataset ds = read_stl10(root.string());
  ASSERT_EQ(ds.train.count(), 3);
  ASSERT_EQ(ds.test.count(), 2);
  EXPECT_EQ(ds.train.height, 96);
  EXPECT_EQ(ds.train.width, 96);
  EXPECT_EQ(ds.train.channels, 3);
  EXPECT_EQ(ds.train.labels, (std::vector<std::int32_t>{0, 9, 3}));
  EXPECT_EQ(ds.test.labels, (std::vector<std::int32_t>{1, 8}));
  int mismatches = 0;
  for (int i = 0; i < 5; ++i) {
    const RawSplit& split = i < 3 ? ds.train : ds.test;
    const std::uint8_t* image = split.images.data() + (i < 3 ? i : i - 3) * split.image_bytes();
    for (int y = 0; y < kSide; ++y)
      for (int x = 0; x < kSide; ++x)
        for (int c = 0; c < 3; ++c) mismatches += image[(y * kSide + x) * 3 + c] != pixel(i, y, x, c);
  }
  EXPECT_EQ(mismatches, 0);
  EXPECT_EQ(ds.class_names, (std::vector<std::string>{"airplane", "bird", "car", "cat", "deer", "dog",
                                                      "horse", "monkey", "ship", "truck"}));
}

TEST(Stl10Reader, OneMarkedPixelLandsAtItsRowAndColumn) {
  const fs::path dir = scratch_dir();
  Bytes x(3 * kSide * kSide, 0);
  x[1] = 200;                                 // channel 0, column 0, row 1
  x[kSide] = 100;                             // channel 0, column 1, row 0
  x[2 * kSide * kSide + 5 * kSide + 7] = 50;  // channel 2, column 5, row 7
  write_file(dir / "train_X.bin", x);
  write_file(dir / "train_y.bin", {3});
  write_file(dir / "test_X.bin", x);
  write_file(dir / "test_y.bin", {3});
  const RawDataset ds = read_stl10(dir.string());
  const auto at = [&](int row, int col, int c) { return ds.train.images[(row * kSide + col) * 3 + c]; };
  EXPECT_EQ(at(1, 0, 0), 200);
  EXPECT_EQ(at(0, 1, 0), 100);
  EXPECT_EQ(at(7, 5, 2), 50);
  EXPECT_EQ(at(5, 7, 2), 0);
  EXPECT_EQ(ds.train.labels, std::vector<std::int32_t>{2});
}

TEST(Stl10Reader, ClassNamesFileAndLimit) {
  const fs::path dir = scratch_dir();
  write_stl10(dir);
  write_text(dir / "class_names.txt", "n0\nn1\nn2\nn3\nn4\nn5\nn6\nn7\nn8\nn9\n");
  const RawDataset ds = read_stl10(dir.string(), 1);
  EXPECT_EQ(ds.class_names[9], "n9");
  EXPECT_EQ(ds.train.labels, std::vector<std::int32_t>{0});
  EXPECT_EQ(ds.test.labels, std::vector<std::int32_t>{1});
}

TEST(Stl10Reader, LabelOutsideOneToTenNamesTheLabelFile) {
  const fs::path root = scratch_dir();
  write_stl10(root / "in");
  write_file(root / "in" / "train_y.bin", {1, 0, 4});
  expect_prep_fails(options_for(Format::stl10, root / "in", root / "out"), "train_y.bin",
                    "label 0 of image 1 is outside 1..10");
  write_file(root / "in" / "train_y.bin", {1, 2, 11});
  expect_prep_fails(options_for(Format::stl10, root / "in", root / "out"), "train_y.bin", "label 11");
}

TEST(Stl10Reader, TruncatedImageFileNamesTheFile) {
  const fs::path root = scratch_dir();
  write_stl10(root / "in");
  Bytes x = images_file({3, 4});
  x.pop_back();
  write_file(root / "in" / "test_X.bin", x);
  expect_prep_fails(options_for(Format::stl10, root / "in", root / "out"), "test_X.bin",
                    "not a multiple of the 27648-byte 96x96x3 image");
}

TEST(Stl10Reader, LabelCountMismatchNamesBothFiles) {
  const fs::path root = scratch_dir();
  write_stl10(root / "in");
  write_file(root / "in" / "test_y.bin", {2, 9, 1});
  expect_prep_fails(options_for(Format::stl10, root / "in", root / "out"), "test_y.bin",
                    "holds 3 labels but");
  expect_prep_fails(options_for(Format::stl10, root / "in", root / "out"), "test_X.bin", "holds 2 images");
}

TEST(Stl10Reader, MissingFileIsNamed) {
  const fs::path root = scratch_dir();
  write_stl10(root / "in");
  fs::remove(root / "in" / "test_y.bin");
  expect_prep_fails(options_for(Format::stl10, root / "in", root / "out"), "test_y.bin", "missing");
}

}  // namespace
}  // namespace ft::prep
