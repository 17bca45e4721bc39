// Tests of the CIFAR-10 and CIFAR-100 binary readers on files synthesized in the official record layout:
// exact CHW -> NHWC pixels, label order across batches, class-name files, --limit, and every bad input.
#include <gtest/gtest.h>

#include "data_prep/cifar_reader.h"
#include "prep_test_util.h"

namespace ft::prep {
namespace {

using namespace ft::prep::testing;

// Pixel (row y, column x, channel c) of synthetic image `id`.
std::uint8_t pixel(int id, int y, int x, int c) {
  return static_cast<std::uint8_t>(id * 31 + c * 80 + y * 2 + x);
}

// One record in the official layout: label byte(s), then 1024 R, 1024 G, 1024 B bytes, each row-major.
Bytes record(const Bytes& label_bytes, int id) {
  Bytes r = label_bytes;
  for (int c = 0; c < 3; ++c)
    for (int y = 0; y < 32; ++y)
      for (int x = 0; x < 32; ++x) r.push_back(pixel(id, y, x, c));
  return r;
}

// data_batch_b.bin holds records with labels {2b-1, 2b} mod 10 (ids 2b-2, 2b-1); test_batch one record.
void write_cifar10(const fs::path& dir) {
  for (int b = 1; b <= 5; ++b) {
    Bytes batch = record({static_cast<std::uint8_t>((2 * b - 1) % 10)}, 2 * b - 2);
    const Bytes second = record({static_cast<std::uint8_t>((2 * b) % 10)}, 2 * b - 1);
    batch.insert(batch.end(), second.begin(), second.end());
    write_file(dir / ("data_batch_" + std::to_string(b) + ".bin"), batch);
  }
  write_file(dir / "test_batch.bin", record({7}, 50));
}

void expect_image(const RawSplit& split, std::int64_t index, int id) {
  ASSERT_LT(index, split.count());
  const std::uint8_t* image = split.images.data() + index * split.image_bytes();
  int mismatches = 0;
  for (int y = 0; y < 32; ++y)
    for (int x = 0; x < 32; ++x)
      for (int c = 0; c < 3; ++c) mismatches += image[(y * 32 + x) * 3 + c] != pixel(id, y, x, c);
  EXPECT_EQ(mismatches, 0) << "image " << index;
}

TEST(CifarReader, Cifar10RecordsBecomeNhwcImagesInBatchOrder) {
  const fs::path dir = scratch_dir() / "cifar-10-batches-bin";
  write_cifar10(dir);
  const RawDataset ds = read_cifar10(dir.string());
  ASSERT_EQ(ds.train.count(), 10);
  ASSERT_EQ(ds.test.count(), 1);
  EXPECT_EQ(ds.train.height, 32);
  EXPECT_EQ(ds.train.width, 32);
  EXPECT_EQ(ds.train.channels, 3);
  EXPECT_EQ(ds.train.labels, (std::vector<std::int32_t>{1, 2, 3, 4, 5, 6, 7, 8, 9, 0}));
  EXPECT_EQ(ds.test.labels, std::vector<std::int32_t>{7});
  for (int i = 0; i < 10; ++i) expect_image(ds.train, i, i);
  expect_image(ds.test, 0, 50);
  // Spelled out for one pixel: row 1, column 2 of image 3 is record byte 1 + c*1024 + 1*32 + 2.
  const std::uint8_t* image3 = ds.train.images.data() + 3 * 3072;
  EXPECT_EQ(image3[(1 * 32 + 2) * 3 + 0], 3 * 31 + 0 + 2 + 2);
  EXPECT_EQ(image3[(1 * 32 + 2) * 3 + 1], 3 * 31 + 80 + 2 + 2);
  EXPECT_EQ(image3[(1 * 32 + 2) * 3 + 2], (3 * 31 + 160 + 2 + 2) % 256);
  EXPECT_EQ(ds.class_names, (std::vector<std::string>{"airplane", "automobile", "bird", "cat", "deer", "dog",
                                                      "frog", "horse", "ship", "truck"}));
  EXPECT_EQ(ds.source_files.size(), 6u);
}

TEST(CifarReader, Cifar10AcceptsTheParentFolderAndReadsBatchesMeta) {
  const fs::path root = scratch_dir();
  write_cifar10(root / "cifar-10-batches-bin");
  write_text(root / "cifar-10-batches-bin" / "batches.meta.txt",
             "a0\na1\na2\na3\na4\na5\na6\na7\na8\na9\n\n");
  const RawDataset ds = read_cifar10(root.string());
  EXPECT_EQ(ds.train.count(), 10);
  EXPECT_EQ(ds.class_names.front(), "a0");
  EXPECT_EQ(ds.class_names.back(), "a9");
  EXPECT_EQ(ds.source_files.size(), 7u);
}

TEST(CifarReader, LimitTakesTheFirstImagesOfEachSplit) {
  const fs::path dir = scratch_dir();
  write_cifar10(dir);
  const RawDataset ds = read_cifar10(dir.string(), 3);
  EXPECT_EQ(ds.train.labels, (std::vector<std::int32_t>{1, 2, 3}));
  EXPECT_EQ(ds.test.count(), 1);
  expect_image(ds.train, 2, 2);
  EXPECT_EQ(ds.source_files.size(), 3u);  // batches 1, 2 and the test batch
}

TEST(CifarReader, Cifar100UsesTheFineLabelByDefaultAndCoarseOnRequest) {
  const fs::path dir = scratch_dir();
  Bytes train = record({3, 87}, 0);
  const Bytes second = record({19, 99}, 1);
  train.insert(train.end(), second.begin(), second.end());
  write_file(dir / "train.bin", train);
  write_file(dir / "test.bin", record({0, 42}, 2));

  const RawDataset fine = read_cifar100(dir.string());
  EXPECT_EQ(fine.train.labels, (std::vector<std::int32_t>{87, 99}));
  EXPECT_EQ(fine.test.labels, std::vector<std::int32_t>{42});
  ASSERT_EQ(fine.class_names.size(), 100u);
  EXPECT_EQ(fine.class_names[87], "class_87");
  expect_image(fine.train, 1, 1);
  expect_image(fine.test, 0, 2);

  const RawDataset coarse = read_cifar100(dir.string(), kNoLimit, Cifar100Label::coarse);
  EXPECT_EQ(coarse.train.labels, (std::vector<std::int32_t>{3, 19}));
  ASSERT_EQ(coarse.class_names.size(), 20u);
  EXPECT_EQ(coarse.class_names[19], "coarse_19");
}

TEST(CifarReader, Cifar100ReadsFineLabelNamesFromTheParentFolder) {
  const fs::path root = scratch_dir();
  const fs::path dir = root / "cifar-100-binary";
  write_file(dir / "train.bin", record({1, 5}, 0));
  write_file(dir / "test.bin", record({1, 6}, 1));
  std::string names;
  for (int i = 0; i < 100; ++i) names += "fine" + std::to_string(i) + "\n";
  write_text(dir / "fine_label_names.txt", names);
  const RawDataset ds = read_cifar100(root.string());
  EXPECT_EQ(ds.class_names[5], "fine5");
  EXPECT_EQ(ds.class_names[99], "fine99");
}

TEST(CifarReader, MissingBatchNamesTheFile) {
  const fs::path root = scratch_dir();
  write_cifar10(root / "in");
  fs::remove(root / "in" / "data_batch_3.bin");
  expect_prep_fails(options_for(Format::cifar10, root / "in", root / "out"), "data_batch_3.bin", "missing");
}

TEST(CifarReader, SizeNotAMultipleOfTheRecordNamesTheFile) {
  const fs::path root = scratch_dir();
  write_cifar10(root / "in");
  Bytes test = record({7}, 50);
  test.resize(test.size() + 3073 - 1);  // a second record one byte short
  write_file(root / "in" / "test_batch.bin", test);
  fs::create_directories(root / "out");
  expect_prep_fails(options_for(Format::cifar10, root / "in", root / "out"), "test_batch.bin",
                    "not a multiple of the 3073-byte record");
}

TEST(CifarReader, TruncatedSingleRecordNamesTheFile) {
  const fs::path root = scratch_dir();
  write_cifar10(root / "in");
  Bytes batch = record({1}, 0);
  batch.resize(1000);
  write_file(root / "in" / "data_batch_1.bin", batch);
  expect_prep_fails(options_for(Format::cifar10, root / "in", root / "out"), "data_batch_1.bin", "truncated");
}

TEST(CifarReader, LabelOutOfRangeNamesTheFileAndRecord) {
  const fs::path root = scratch_dir();
  write_cifar10(root / "in");
  write_file(root / "in" / "data_batch_2.bin", record({10}, 0));
  expect_prep_fails(options_for(Format::cifar10, root / "in", root / "out"), "data_batch_2.bin",
                    "record 0 has label 10, outside 0..9");

  write_file(root / "c100" / "train.bin", record({1, 100}, 0));
  write_file(root / "c100" / "test.bin", record({1, 2}, 0));
  expect_prep_fails(options_for(Format::cifar100, root / "c100", root / "out"), "train.bin",
                    "label 100, outside 0..99");
}

TEST(CifarReader, ClassNameFileWithTheWrongCountNamesTheFile) {
  const fs::path root = scratch_dir();
  write_cifar10(root / "in");
  write_text(root / "in" / "batches.meta.txt", "cat\ndog\n");
  expect_prep_fails(options_for(Format::cifar10, root / "in", root / "out"), "batches.meta.txt",
                    "lists 2 class names, expected 10");
}

TEST(CifarReader, MissingInputFolderIsNamed) {
  const fs::path root = scratch_dir();
  expect_prep_fails(options_for(Format::cifar100, root / "nowhere", root / "out"), "nowhere",
                    "input directory does not exist");
}

}  // namespace
}  // namespace ft::prep
