// A shard whose /labels does not match /images: the reader names the file and both counts, at one label short
// and one over, so a shard set damaged or written by another tool is refused before training.
#include <gtest/gtest.h>
#include <hdf5.h>
#include <unistd.h>

#include <cstdint>
#include <string>
#include <vector>

#include "error_of.h"
#include "io/h5.h"
#include "io/paths.h"
#include "shard/shard_format.h"
#include "test_paths.h"

namespace ft {
namespace {

// A 6-image shard of 2x2 RGB whose /labels is then rewritten with `labels` entries.
std::string shard_with_labels(hsize_t labels) {
  const std::string path = test::temp_dir() + "/shard_labels_" + std::to_string(getpid()) + ".h5";
  ShardMeta meta;
  meta.dataset = "noise", meta.split = "train", meta.class_names = {"a", "b"};
  meta.mean = {0.5, 0.5, 0.5}, meta.std = {0.25, 0.25, 0.25};
  meta.count = 6, meta.height = meta.width = 2, meta.channels = 3;
  const std::vector<std::uint8_t> images(6 * 2 * 2 * 3, 7);
  const std::vector<std::int32_t> six(6, 1);
  write_shard(path, meta, images.data(), six.data());
  const h5::Handle file = h5::open_file(path, true);
  EXPECT_GE(H5Ldelete(file, "labels", H5P_DEFAULT), 0);
  const std::vector<std::int32_t> replaced(labels, 1);
  h5::write(file, "labels", replaced.data(), {labels});
  return path;
}

TEST(ShardFormat, LabelsThatDoNotMatchTheImagesAreNamed) {
  for (const hsize_t labels : {5, 7}) {
    const std::string path = shard_with_labels(labels);
    const std::string error = test::error_of([&] { read_shard_meta(path); });
    EXPECT_NE(error.find("/labels has shape [" + std::to_string(labels) + "] but /images holds 6 images"),
              std::string::npos) << error;
    EXPECT_NE(error.find(path), std::string::npos) << error;
    paths::remove(path);
  }
  const std::string matching = shard_with_labels(6);
  EXPECT_EQ(read_shard_meta(matching).count, 6);
  paths::remove(matching);
}

}  // namespace
}  // namespace ft
