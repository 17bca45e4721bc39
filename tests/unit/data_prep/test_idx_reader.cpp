// Tests of the IDX (MNIST / Fashion-MNIST) reader: raw and gzip files synthesized with the official
// big-endian headers, class names, header and data errors, and the real Fashion-MNIST release.
#include <gtest/gtest.h>

#include <array>
#include <fstream>
#include <iterator>

#include "shard/shard_reader.h"
#include "data_prep/idx_reader.h"
#include "prep_test_util.h"

namespace ft::prep {
namespace {

using namespace ft::prep::testing;

void put_u32(Bytes& out, std::uint32_t v) {
  for (int shift = 24; shift >= 0; shift -= 8) out.push_back(static_cast<std::uint8_t>(v >> shift));
}

// An IDX3 image file of `count` rows x cols images whose pixel i of image k is k*50 + i.
Bytes idx_images(std::uint32_t count, std::uint32_t rows, std::uint32_t cols, std::uint32_t magic = 0x803) {
  Bytes out;
  put_u32(out, magic);
  put_u32(out, count);
  put_u32(out, rows);
  put_u32(out, cols);
  for (std::uint32_t k = 0; k < count; ++k)
    for (std::uint32_t i = 0; i < rows * cols; ++i) out.push_back(static_cast<std::uint8_t>(k * 50 + i));
  return out;
}

Bytes idx_labels(const Bytes& labels, std::uint32_t magic = 0x801) {
  Bytes out;
  put_u32(out, magic);
  put_u32(out, static_cast<std::uint32_t>(labels.size()));
  out.insert(out.end(), labels.begin(), labels.end());
  return out;
}

void write_idx(const fs::path& dir, bool gz) {
  const auto put = [&](const std::string& name, const Bytes& bytes) {
    if (gz)
      write_gz(dir / (name + ".gz"), bytes);
    else
      write_file(dir / name, bytes);
  };
  put("train-images-idx3-ubyte", idx_images(3, 2, 3));
  put("train-labels-idx1-ubyte", idx_labels({5, 0, 9}));
  put("t10k-images-idx3-ubyte", idx_images(2, 2, 3));
  put("t10k-labels-idx1-ubyte", idx_labels({1, 2}));
}

void expect_synthetic(const RawDataset& ds) {
  ASSERT_EQ(ds.train.count(), 3);
  ASSERT_EQ(ds.test.count(), 2);
  EXPECT_EQ(ds.train.height, 2);
  EXPECT_EQ(ds.train.width, 3);
  EXPECT_EQ(ds.train.channels, 1);
  EXPECT_EQ(ds.train.labels, (std::vector<std::int32_t>{5, 0, 9}));
  EXPECT_EQ(ds.test.labels, (std::vector<std::int32_t>{1, 2}));
  EXPECT_EQ(ds.train.images, (Bytes{0, 1, 2, 3, 4, 5, 50, 51, 52, 53, 54, 55, 100, 101, 102, 103, 104, 105}));
  EXPECT_EQ(ds.test.images, (Bytes{0, 1, 2, 3, 4, 5, 50, 51, 52, 53, 54, 55}));
}

TEST(IdxReader, RawFilesAreReadExactly) {
  const fs::path dir = scratch_dir();
  write_idx(dir, false);
  const RawDataset ds = read_idx(dir.string(), "mnist");
  expect_synthetic(ds);
  EXPECT_EQ(ds.class_names, (std::vector<std::string>{"0", "1", "2", "3", "4", "5", "6", "7", "8", "9"}));
  EXPECT_EQ(ds.source_files.size(), 4u);
}

TEST(IdxReader, GzipFilesGiveTheSameImages) {
  const fs::path dir = scratch_dir();
  write_idx(dir, true);
  const RawDataset ds = read_idx(dir.string(), "fashion-mnist");
  expect_synthetic(ds);
  EXPECT_EQ(ds.class_names.front(), "T-shirt/top");
  EXPECT_EQ(ds.class_names.back(), "Ankle boot");
  EXPECT_EQ(ds.source_files.front(), (dir / "train-images-idx3-ubyte.gz").string());
}

TEST(IdxReader, DefaultNameComesFromTheInputPath) {
  EXPECT_EQ(idx_default_name("/data/Fashion-MNIST/raw"), "fashion-mnist");
  EXPECT_EQ(idx_default_name("/usr/share/datasets/fashion-mnist"), "fashion-mnist");
  EXPECT_EQ(idx_default_name("/data/mnist"), "mnist");
}

TEST(IdxReader, LimitReadsOnlyTheFirstImages) {
  const fs::path dir = scratch_dir();
  write_idx(dir, true);
  const RawDataset ds = read_idx(dir.string(), "mnist", 1);
  EXPECT_EQ(ds.train.labels, std::vector<std::int32_t>{5});
  EXPECT_EQ(ds.test.labels, std::vector<std::int32_t>{1});
  EXPECT_EQ(ds.train.images, (Bytes{0, 1, 2, 3, 4, 5}));
}

TEST(IdxReader, MagicMismatchNamesTheFile) {
  const fs::path root = scratch_dir();
  write_idx(root / "in", false);
  write_file(root / "in" / "t10k-images-idx3-ubyte", idx_labels({1, 2}));
  expect_prep_fails(
      options_for(Format::idx, root / "in", root / "out"), "t10k-images-idx3-ubyte",
      "IDX magic number is 0x00000801 but an IDX image (unsigned byte, 3 dimensions) file starts "
      "with 0x00000803");
  write_file(root / "in" / "t10k-images-idx3-ubyte", idx_images(2, 2, 3));
  write_file(root / "in" / "train-labels-idx1-ubyte", idx_labels({5, 0, 9}, 0x803));
  expect_prep_fails(options_for(Format::idx, root / "in", root / "out"), "train-labels-idx1-ubyte",
                    "IDX magic number is 0x00000803");
}

TEST(IdxReader, TruncatedPixelsNameTheFile) {
  const fs::path root = scratch_dir();
  write_idx(root / "in", false);
  Bytes images = idx_images(3, 2, 3);
  images.resize(images.size() - 4);
  write_file(root / "in" / "train-images-idx3-ubyte", images);
  expect_prep_fails(options_for(Format::idx, root / "in", root / "out"), "train-images-idx3-ubyte",
                    "header claims 3 images of 2x3 (34 bytes with the header) but the file holds only 30 bytes");
  write_file(root / "in" / "train-images-idx3-ubyte", idx_images(3, 2, 3));
  write_file(root / "in" / "t10k-labels-idx1-ubyte", Bytes{0, 0, 8, 1, 0, 0, 0, 2, 1});  // 1 of 2 labels
  expect_prep_fails(options_for(Format::idx, root / "in", root / "out"), "t10k-labels-idx1-ubyte",
                    "header claims 2 labels (10 bytes with the header needed) but the file holds only 9 bytes");
}

TEST(IdxReader, TruncatedGzipPixelsNameTheFile) {
  const fs::path root = scratch_dir();
  write_idx(root / "in", true);
  Bytes images = idx_images(3, 2, 3);
  images.resize(images.size() - 4);
  write_gz(root / "in" / "train-images-idx3-ubyte.gz", images);
  expect_prep_fails(options_for(Format::idx, root / "in", root / "out"), "train-images-idx3-ubyte.gz",
                    "truncated: the file ends after 14 of the 18 bytes of pixels");
}

// A gzip file whose stream is damaged (its CRC trailer altered) fails where zlib finds the damage, naming the file
// and what was being read, never as a short file: in the header when the whole stream fits zlib's first read, in
// the pixels when a megabyte of them comes first.
TEST(IdxReader, DamagedGzipStreamSaysItCannotBeRead) {
  const auto damaged = [](Bytes bytes, const fs::path& path) {
    write_gz(path, bytes);
    std::ifstream in(path, std::ios::binary);
    Bytes gz((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    gz[gz.size() - 8] ^= 0xFF;  // the first byte of the CRC-32 of the data
    write_file(path, gz);
  };
  const fs::path root = scratch_dir();
  write_idx(root / "in", true);
  damaged(idx_images(3, 2, 3), root / "in" / "train-images-idx3-ubyte.gz");
  expect_prep_fails(options_for(Format::idx, root / "in", root / "out"), "train-images-idx3-ubyte.gz",
                    "cannot read the header: ");

  Bytes big = idx_images(4, 512, 512);
  std::uint32_t state = 1;  // pixels that do not compress: the damage lies a megabyte into the stream
  for (std::size_t i = 16; i < big.size(); ++i) {
    state = state * 1664525u + 1013904223u;
    big[i] = static_cast<std::uint8_t>(state >> 24);
  }
  damaged(big, root / "in" / "train-images-idx3-ubyte.gz");
  write_gz(root / "in" / "train-labels-idx1-ubyte.gz", idx_labels({1, 2, 3, 4}));
  expect_prep_fails(options_for(Format::idx, root / "in", root / "out"), "train-images-idx3-ubyte.gz",
                    "cannot read pixels: ");
}

// Fuzzing regressions: headers claiming far more than the file holds used to be believed, allocating
// (and zeroing) up to terabytes before any byte was read. Now they fail at once, naming the file.
Bytes idx_header(std::uint32_t count, std::uint32_t rows, std::uint32_t cols) {
  Bytes out;
  put_u32(out, 0x803);
  put_u32(out, count);
  put_u32(out, rows);
  put_u32(out, cols);
  return out;
}

// The header of an IDX label file that claims `count` labels.
Bytes idx_label_header(std::uint32_t count) {
  Bytes out;
  put_u32(out, 0x801);
  put_u32(out, count);
  return out;
}

TEST(IdxReader, ImplausibleImageSizeNamesTheFile) {
  const fs::path root = scratch_dir();
  write_idx(root / "in", false);
  write_file(root / "in" / "train-images-idx3-ubyte", idx_header(0xFFFFFFFFu, 65536, 65536));
  expect_prep_fails(options_for(Format::idx, root / "in", root / "out"), "train-images-idx3-ubyte",
                    "image size 65536x65536 in the header is not plausible");
  write_file(root / "in" / "train-images-idx3-ubyte", idx_header(3, 0, 28));
  expect_prep_fails(options_for(Format::idx, root / "in", root / "out"), "train-images-idx3-ubyte",
                    "image size 0x28 in the header is not plausible");
  write_file(root / "in" / "train-images-idx3-ubyte", idx_header(3, 28, 16385));
  expect_prep_fails(options_for(Format::idx, root / "in", root / "out"), "train-images-idx3-ubyte",
                    "image size 28x16385 in the header is not plausible");
}

TEST(IdxReader, HugeCountInASmallRawFileIsRefusedBeforeAllocating) {
  const fs::path root = scratch_dir();
  write_idx(root / "in", false);
  Bytes images = idx_header(1000000, 1000, 1000);
  images.resize(350, 7);
  write_file(root / "in" / "train-images-idx3-ubyte", images);
  Bytes labels = idx_label_header(1000000);
  labels.resize(100, 1);
  write_file(root / "in" / "train-labels-idx1-ubyte", labels);
  expect_prep_fails(options_for(Format::idx, root / "in", root / "out"), "train-images-idx3-ubyte",
                    "header claims 1000000 images of 1000x1000 (1000000000016 bytes with the header) but "
                    "the file holds only 350 bytes");
  // With --limit only the first images are needed, and the message says so.
  PrepOptions limited = options_for(Format::idx, root / "in", root / "out");
  limited.limit = 2;
  expect_prep_fails(limited, "train-images-idx3-ubyte",
                    "header claims 1000000 images of 1000x1000; the first 2 need 2000016 bytes with the header "
                    "but the file holds only 350 bytes");
  // The largest header that passes the shape check: 2^32-1 images of 16384x16384.
  write_file(root / "in" / "train-images-idx3-ubyte", idx_header(0xFFFFFFFFu, 16384, 16384));
  write_file(root / "in" / "train-labels-idx1-ubyte", idx_label_header(0xFFFFFFFFu));
  expect_prep_fails(options_for(Format::idx, root / "in", root / "out"), "train-images-idx3-ubyte",
                    "header claims 4294967295 images of 16384x16384");
}

TEST(IdxReader, HugeCountInASmallGzipFileIsReadIncrementally) {
  const fs::path root = scratch_dir();
  write_idx(root / "in", true);
  Bytes images = idx_header(1000000, 1000, 1000);
  images.resize(350, 7);
  write_gz(root / "in" / "train-images-idx3-ubyte.gz", images);
  write_gz(root / "in" / "train-labels-idx1-ubyte.gz", idx_label_header(1000000));
  expect_prep_fails(options_for(Format::idx, root / "in", root / "out"), "train-images-idx3-ubyte.gz",
                    "truncated: the file ends after 334 of the 1000000000000 bytes of pixels");
}

// The real release (Debian package dataset-fashion-mnist): full read for the label counts, then a
// limited conversion through the shard writer and back through ShardReader.
TEST(IdxReader, RealFashionMnist) {
  const fs::path real = ft::test::fashion_mnist_dir();
  if (!fs::exists(real / "train-images-idx3-ubyte.gz"))
    GTEST_SKIP() << "Fashion-MNIST not found in " << real << " (apt-get install dataset-fashion-mnist)";
  const RawDataset ds = read_idx(real.string(), idx_default_name(real.string()));
  ASSERT_EQ(ds.train.count(), 60000);
  ASSERT_EQ(ds.test.count(), 10000);
  EXPECT_EQ(ds.train.height, 28);
  EXPECT_EQ(ds.train.width, 28);
  EXPECT_EQ(ds.train.channels, 1);
  std::array<int, 10> train_counts{}, test_counts{};
  for (auto label : ds.train.labels) ++train_counts.at(static_cast<std::size_t>(label));
  for (auto label : ds.test.labels) ++test_counts.at(static_cast<std::size_t>(label));
  for (int c = 0; c < 10; ++c) {
    EXPECT_EQ(train_counts[static_cast<std::size_t>(c)], 6000) << "class " << c;
    EXPECT_EQ(test_counts[static_cast<std::size_t>(c)], 1000) << "class " << c;
  }
  EXPECT_EQ(ds.train.labels.front(), 9);  // the first training image is an ankle boot
  EXPECT_EQ(ds.class_names[9], "Ankle boot");

  const fs::path out = scratch_dir() / "shards";
  PrepOptions options = options_for(Format::idx, real, out);
  options.limit = 1000;
  options.shards = 2;
  const PrepSummary summary = run_prep(options);
  EXPECT_EQ(summary.dataset, "fashion-mnist");
  EXPECT_EQ(summary.train_count, 1000);
  EXPECT_EQ(summary.test_count, 1000);
  const ShardReader train(out.string(), "train");
  EXPECT_EQ(train.total(), 1000);
  EXPECT_EQ(train.meta().height, 28);
  EXPECT_EQ(train.meta().width, 28);
  EXPECT_EQ(train.meta().channels, 1);
  const HostSplit all = train.read(0, 1000);
  std::array<int, 10> counts{};
  for (auto label : all.labels) ++counts.at(static_cast<std::size_t>(label));
  EXPECT_EQ(counts, (std::array<int, 10>{107, 104, 86, 92, 95, 100, 100, 115, 102, 99}));
  EXPECT_TRUE(std::equal(all.images.begin(), all.images.end(), ds.train.images.begin()));
  // Of these first 1000 images (numpy: 0.2829031763, 0.3530793028).
  EXPECT_NEAR(summary.mean[0], 0.2829031763, 1e-9);
  EXPECT_NEAR(summary.std[0], 0.3530793028, 1e-9);
}

}  // namespace
}  // namespace ft::prep
