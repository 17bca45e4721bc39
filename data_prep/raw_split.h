// In-memory form of a data set between a format reader and the shard writer: uint8 NHWC images,
// int32 labels and class names for each split, plus the list of raw files the reader consumed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace ft::prep {

// "No --limit": readers take min(available, limit) images of each split.
constexpr std::int64_t kNoLimit = std::numeric_limits<std::int64_t>::max();

// One split (train or test) of equally sized images, stored NHWC.
struct RawSplit {
  int height = 0, width = 0, channels = 0;
  std::vector<std::uint8_t> images;  // count() * image_bytes() bytes
  std::vector<std::int32_t> labels;

  std::int64_t count() const { return static_cast<std::int64_t>(labels.size()); }
  std::size_t image_bytes() const {
    return static_cast<std::size_t>(height) * static_cast<std::size_t>(width) *
           static_cast<std::size_t>(channels);
  }
  // Sets the shape and reserves room for `n` images.
  void reset(int h, int w, int c, std::int64_t n) {
    height = h;
    width = w;
    channels = c;
    images.clear();
    labels.clear();
    images.reserve(static_cast<std::size_t>(n) * image_bytes());
    labels.reserve(static_cast<std::size_t>(n));
  }
};

// What every reader returns: both splits, label i names class_names[i].
struct RawDataset {
  std::vector<std::string> class_names;
  RawSplit train, test;
  std::vector<std::string> source_files;  // raw input files read, for source_sha256
};

}  // namespace ft::prep
