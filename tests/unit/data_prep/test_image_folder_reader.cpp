// Tests of the image-folder reader on PNG and JPEG files written with libpng and TurboJPEG: class order,
// file order, exact PNG pixels, JPEG within tolerance, --resize of mixed sizes, and every bad tree.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <iterator>

#include "data_prep/image_codec.h"
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
    ASSERT_EQ(got.size(), want.size()) << "class" << k;
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

// Fuzzing regressions: a few hundred bytes declaring a 65000 x 65000 JPEG or a 900000 x 900000 PNG
// used to allocate gigabytes (the PNG size even overflowed 32 bits). The header is now checked first.
void put_be32(Bytes& bytes, std::size_t at, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) bytes[at + static_cast<std::size_t>(i)] = static_cast<std::uint8_t>(v >> (24 - 8 * i));
}

// A small real JPEG whose SOF header claims height x width.
Bytes jpeg_declaring(std::uint16_t height, std::uint16_t width) {
  Bytes jpeg = jpeg_bytes(16, 16, gradient(16, 16, 0));
  for (std::size_t i = 2; i + 8 < jpeg.size(); ++i) {
    if (jpeg[i] == 0xFF && jpeg[i + 1] >= 0xC0 && jpeg[i + 1] <= 0xC2) {  // SOF0..SOF2
      jpeg[i + 5] = static_cast<std::uint8_t>(height >> 8);
      jpeg[i + 6] = static_cast<std::uint8_t>(height);
      jpeg[i + 7] = static_cast<std::uint8_t>(width >> 8);
      jpeg[i + 8] = static_cast<std::uint8_t>(width);
      return jpeg;
    }
  }
  ADD_FAILURE() << "no SOF marker in the test JPEG";
  return jpeg;
}

// A small real PNG whose IHDR claims height x width (with its CRC fixed, so libpng accepts the header).
Bytes png_declaring(const fs::path& scratch, std::uint32_t height, std::uint32_t width) {
  const fs::path tmp = scratch / "small.png";
  write_png(tmp, 4, 5, gradient(4, 5, 0));
  std::ifstream in(tmp, std::ios::binary);
  Bytes png((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  fs::remove(tmp);
  put_be32(png, 16, width);  // 8-byte signature, IHDR length and type, then width and height
  put_be32(png, 20, height);
  put_be32(png, 29, static_cast<std::uint32_t>(crc32(0, png.data() + 12, 17)));  // type + 13 data bytes
  return png;
}

std::string decode_error(const Bytes& bytes, const std::string& path) {
  ImageDecoder decoder;
  try {
    decoder.decode(bytes, path);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(ImageFolderReader, HugeDeclaredJpegIsRefusedFromItsHeader) {
  const fs::path root = scratch_dir();
  EXPECT_EQ(decode_error(jpeg_declaring(65000, 65000), "x/big.jpg"),
            "x/big.jpg: JPEG header declares 65000x65000 pixels, beyond the limit of 32768 per side and "
            "67108864 pixels in all");
  EXPECT_NE(decode_error(jpeg_declaring(16, 40000), "x/wide.jpg").find("x/wide.jpg: JPEG header declares 40000x16"),
            std::string::npos);
  EXPECT_NE(decode_error(jpeg_declaring(8193, 8192), "x/many.jpg").find("declares 8192x8193 pixels"),
            std::string::npos);
  write_png_tree(root / "in");
  write_file(root / "in" / "train" / "dog" / "huge.jpg", jpeg_declaring(65000, 65000));
  expect_prep_fails(options_for(Format::folder, root / "in", root / "out"), "train/dog/huge.jpg",
                    "JPEG header declares 65000x65000 pixels");
}

TEST(ImageFolderReader, HugeDeclaredPngIsRefusedFromItsHeader) {
  const fs::path root = scratch_dir();
  EXPECT_EQ(decode_error(png_declaring(root, 900000, 900000), "x/big.png"),
            "x/big.png: PNG header declares 900000x900000 pixels, beyond the limit of 32768 per side and "
            "67108864 pixels in all");
  EXPECT_NE(decode_error(png_declaring(root, 9000, 9000), "x/many.png").find("declares 9000x9000 pixels"),
            std::string::npos);
  // A header within the limit is still decoded (and then fails on the short data, naming the file).
  const std::string small = decode_error(png_declaring(root, 40, 50), "x/ok.png");
  EXPECT_NE(small.find("x/ok.png: cannot decode PNG"), std::string::npos) << small;
  write_png_tree(root / "in");
  write_file(root / "in" / "test" / "cat" / "huge.png", png_declaring(root, 900000, 900000));
  expect_prep_fails(options_for(Format::folder, root / "in", root / "out"), "test/cat/huge.png",
                    "PNG header declares 900000x900000 pixels");
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
