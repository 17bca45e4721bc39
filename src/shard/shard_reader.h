// Finds a split's shard files in a directory and reads any contiguous range of its images across them,
// so that each rank loads only its own near-equal slice (HDF5 hyperslabs, no whole-file reads).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "shard/shard_format.h"

namespace ft {

// Host copy of a range of one split: images uint8 NHWC, labels int32.
struct HostSplit {
  ShardMeta meta;  // of the split as a whole: count is the number of images held here
  std::int64_t total = 0;  // images in the whole split, across all shards
  std::int64_t first = 0;  // global index of images[0]
  std::vector<std::uint8_t> images;
  std::vector<std::int32_t> labels;
  std::int64_t size() const { return static_cast<std::int64_t>(labels.size()); }
};

// [begin, end) of `total` items owned by `rank` of `world`: contiguous, sizes differ by at most one.
std::pair<std::int64_t, std::int64_t> slice_of(std::int64_t total, int rank, int world);

class ShardReader {
 public:
  // Opens and cross-checks every `split`-*.h5 shard in dir: all indices present, same shape and classes.
  ShardReader(const std::string& dir, const std::string& split);
  const ShardMeta& meta() const { return meta_; }  // first shard's, count = total images
  std::int64_t total() const { return total_; }
  const std::vector<std::string>& files() const { return files_; }
  HostSplit read(std::int64_t begin, std::int64_t end) const;

 private:
  std::vector<std::string> files_;
  std::vector<std::int64_t> starts_;  // global index of each file's first image
  ShardMeta meta_;
  std::int64_t total_ = 0;
};

}  // namespace ft
