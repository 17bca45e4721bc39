// Tests of the shard writer through the pipeline: train statistics, shards read back with ShardReader
// (--shards 3, a rank's slice), attributes, replacing an earlier set, and cleanup on failure.
#include <gtest/gtest.h>

#include <cmath>

#include "shard/shard_reader.h"
#include "data_prep/checksum.h"
#include "data_prep/shard_writer.h"
#include "io/h5.h"
#include "prep_test_util.h"

namespace ft::prep {
namespace {

using namespace ft::prep::testing;

// An image folder of 10 train images (4 of class a, 6 of class b) and 4 test images (2 + 2), 2x3 PNGs
// numbered in writing order n = 0..13, every byte 10 n + channel. The reader interleaves the classes:
// train order is n = 0 4 1 5 2 6 3 7 8 9, test order 10 12 11 13.
const std::vector<int> kTrainOrder = {0, 4, 1, 5, 2, 6, 3, 7, 8, 9};
const std::vector<std::int32_t> kTrainLabels = {0, 1, 0, 1, 0, 1, 0, 1, 1, 1};
fs::path write_tree(const fs::path& root) {
  int index = 0;
  const auto put = [&](const std::string& split, const std::string& cls) {
    char name[16];
    std::snprintf(name, sizeof(name), "%03d.png", index);
    Bytes rgb(2 * 3 * 3);
    for (std::size_t i = 0; i < rgb.size(); ++i) rgb[i] = static_cast<std::uint8_t>(10 * index + i % 3);
    write_png(root / split / cls / name, 2, 3, rgb);
    ++index;
  };
  for (int i = 0; i < 4; ++i) put("train", "a");
  for (int i = 0; i < 6; ++i) put("train", "b");
  for (int i = 0; i < 2; ++i) put("test", "a");
  for (int i = 0; i < 2; ++i) put("test", "b");
  return root;
}

TEST(ShardWriter, ChannelStatsAreMeanAndPopulationStdInUnitRange) {
  RawSplit split;
  split.reset(1, 2, 2, 1);
  split.images = {0, 51, 255, 153};  // channel 0: 0, 255; channel 1: 51, 153
  split.labels = {0};
  const ChannelStats stats = channel_stats(split);
  ASSERT_EQ(stats.mean.size(), 2u);
  EXPECT_DOUBLE_EQ(stats.mean[0], 0.5);
  EXPECT_DOUBLE_EQ(stats.std[0], 0.5);
  EXPECT_NEAR(stats.mean[1], 0.4, 1e-12);
  EXPECT_NEAR(stats.std[1], 0.2, 1e-12);
}

TEST(ShardWriter, ThreeShardsRoundTripThroughShardReader) {
  const fs::path root = scratch_dir();
  write_tree(root / "toy");
  PrepOptions options = options_for(Format::folder, root / "toy", root / "out");
  options.shards = 3;
  const PrepSummary summary = run_prep(options);

  EXPECT_EQ(summary.dataset, "toy");
  EXPECT_EQ(summary.train_count, 10);
  EXPECT_EQ(summary.test_count, 4);
  const std::vector<std::string> names = {"train-00000-of-00003.h5", "train-00001-of-00003.h5",
                                          "train-00002-of-00003.h5", "test-00000-of-00003.h5",
                                          "test-00001-of-00003.h5",  "test-00002-of-00003.h5"};
  ASSERT_EQ(summary.files.size(), names.size());
  for (std::size_t i = 0; i < names.size(); ++i)
    EXPECT_EQ(summary.files[i], (root / "out" / names[i]).string());
  EXPECT_EQ(outputs_in(root / "out").size(), 6u);  // no staging folder left

  const ShardReader train((root / "out").string(), "train");
  EXPECT_EQ(train.total(), 10);
  EXPECT_EQ(train.meta().class_names, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(train.meta().dataset, "toy");
  const HostSplit all = train.read(0, 10);
  EXPECT_EQ(all.labels, kTrainLabels);
  for (int i = 0; i < 10; ++i)
    for (int b = 0; b < 18; ++b)
      ASSERT_EQ(all.images[static_cast<std::size_t>(i * 18 + b)], 10 * kTrainOrder[i] + b % 3)
          << "image " << i;

  // Near-equal contiguous shards: 4, 3, 3 train images and 2, 1, 1 test images.
  EXPECT_EQ(read_shard_meta((root / "out" / names[0]).string()).count, 4);
  EXPECT_EQ(read_shard_meta((root / "out" / names[2]).string()).count, 3);
  EXPECT_EQ(read_shard_meta((root / "out" / names[3]).string()).count, 2);

  // Rank 1 of a world of 2 reads images 5..9, across the shard boundaries.
  const auto [begin, end] = slice_of(train.total(), 1, 2);
  const HostSplit rank1 = train.read(begin, end);
  EXPECT_EQ(rank1.first, 5);
  ASSERT_EQ(rank1.size(), 5);
  EXPECT_EQ(rank1.images[0], 60);
  EXPECT_EQ(rank1.labels, (std::vector<std::int32_t>{1, 0, 1, 1, 1}));

  const ShardReader test((root / "out").string(), "test");
  EXPECT_EQ(test.total(), 4);
  EXPECT_EQ(test.read(0, 4).images[18], 120);
}

TEST(ShardWriter, EveryShardCarriesTrainStatisticsAndProvenance) {
  const fs::path root = scratch_dir();
  write_tree(root / "toy");
  PrepOptions options = options_for(Format::folder, root / "toy", root / "out");
  options.shards = 2;
  options.name = "toyset";
  const PrepSummary summary = run_prep(options);

  // Channel c of train image i is 10 i + c for i = 0..9: mean (45 + c) / 255, std sqrt(825) / 255.
  std::vector<std::string> sources;
  for (const auto& entry : fs::recursive_directory_iterator(root / "toy"))
    if (entry.is_regular_file()) sources.push_back(entry.path().string());
  for (const auto& file : summary.files) {
    const ShardMeta meta = read_shard_meta(file);
    ASSERT_EQ(meta.mean.size(), 3u) << file;
    for (int c = 0; c < 3; ++c) {
      EXPECT_NEAR(meta.mean[static_cast<std::size_t>(c)], (45.0 + c) / 255.0, 1e-12) << file;
      EXPECT_NEAR(meta.std[static_cast<std::size_t>(c)], std::sqrt(825.0) / 255.0, 1e-12) << file;
    }
    EXPECT_EQ(meta.dataset, "toyset");
    EXPECT_EQ(meta.shard_count, 2);
    EXPECT_EQ(meta.format_version, kShardFormatVersion);
    EXPECT_EQ(meta.source_sha256, sha256_of_files(sources));
    EXPECT_EQ(meta.source_sha256.size(), 64u);
    h5::Handle h5file = h5::open_file(file);
    EXPECT_EQ(h5::element_type(h5file, "labels"), std::make_pair(H5T_INTEGER, std::size_t{4}));
  }
}

TEST(ShardWriter, GrayscaleAndResizeReachTheShards) {
  const fs::path root = scratch_dir();
  write_tree(root / "toy");
  PrepOptions options = options_for(Format::folder, root / "toy", root / "out");
  options.grayscale = true;
  options.resize = 4;
  run_prep(options);
  const ShardReader train((root / "out").string(), "train");
  EXPECT_EQ(train.meta().height, 4);
  EXPECT_EQ(train.meta().width, 4);
  EXPECT_EQ(train.meta().channels, 1);
  // Train image 6 is n = 3, (30, 31, 32) everywhere: gray (299*30 + 587*31 + 114*32 + 500) / 1000 = 31.
  const HostSplit all = train.read(0, 10);
  EXPECT_EQ(all.images[6 * 16 + 7], 31);
  EXPECT_EQ(train.meta().mean.size(), 1u);
}

// An earlier shard set is kept (refused before anything is read) unless --force, which replaces it whole.
TEST(ShardWriter, AnEarlierShardSetIsReplacedOnlyWithForce) {
  const fs::path root = scratch_dir();
  write_tree(root / "toy");
  PrepOptions options = options_for(Format::folder, root / "toy", root / "out");
  options.shards = 4;
  run_prep(options);
  write_text(root / "out" / "notes.md", "kept");
  options.shards = 2;
  try {
    run_prep(options);
    FAIL() << "a second conversion replaced the shard set without --force";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("already holds a shard set (8 files: test-00000-of-00004.h5, ...)"),
              std::string::npos) << e.what();
  }
  EXPECT_EQ(outputs_in(root / "out").size(), 8u);
  options.force = true;
  run_prep(options);
  auto left = outputs_in(root / "out");
  std::sort(left.begin(), left.end());
  EXPECT_EQ(left, (std::vector<std::string>{"test-00000-of-00002.h5", "test-00001-of-00002.h5",
                                            "train-00000-of-00002.h5", "train-00001-of-00002.h5"}));
  EXPECT_TRUE(fs::exists(root / "out" / "notes.md"));
  EXPECT_EQ(ShardReader((root / "out").string(), "train").total(), 10);
}

TEST(ShardWriter, FailedMoveLeavesNoNewShardAndNoStagingFolder) {
  const fs::path root = scratch_dir();
  write_tree(root / "toy");
  // A folder where the second test shard must go makes its rename fail after the train shards moved.
  fs::create_directories(root / "out" / "test-00001-of-00002.h5" / "occupied");
  PrepOptions options = options_for(Format::folder, root / "toy", root / "out");
  options.shards = 2;
  EXPECT_THROW(run_prep(options), Error);
  EXPECT_EQ(outputs_in(root / "out"), std::vector<std::string>{"test-00001-of-00002.h5"});
  EXPECT_TRUE(fs::is_directory(root / "out" / "test-00001-of-00002.h5"));
}

TEST(ShardWriter, MoreShardsThanImagesIsRefusedBeforeWriting) {
  const fs::path root = scratch_dir();
  write_tree(root / "toy");
  PrepOptions options = options_for(Format::folder, root / "toy", root / "out");
  options.shards = 5;
  expect_prep_fails(options, "--shards 5", "more than the 4 images of the test split");
}

TEST(ShardWriter, OutputThatIsAFileIsNamed) {
  const fs::path root = scratch_dir();
  write_tree(root / "toy");
  write_text(root / "out", "a file");
  expect_prep_fails(options_for(Format::folder, root / "toy", root / "out"), (root / "out").string(),
                    "cannot create the output folder");
}

}  // namespace
}  // namespace ft::prep
