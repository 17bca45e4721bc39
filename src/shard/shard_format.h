// The versioned HDF5 shard schema shared by fusetrain-prep (writer) and training (reader):
// /images uint8 [N,H,W,C], /labels int32 [N], and the attributes that describe the split.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace ft {

constexpr std::int64_t kShardFormatVersion = 1;

struct ShardMeta {
  std::string dataset;                   // "cifar10", "fashion-mnist", ...
  std::string split;                     // "train" or "test"
  std::vector<std::string> class_names;  // label i is class_names[i]
  std::vector<double> mean, std;         // per channel, in [0,1] pixel units, of the train split
  std::int64_t shard_index = 0, shard_count = 1;
  std::string source_sha256;             // checksum of the raw input files
  std::int64_t format_version = kShardFormatVersion;
  std::int64_t count = 0;                // images in this shard
  int height = 0, width = 0, channels = 0;
};

// "train-00001-of-00004.h5"
std::string shard_file_name(const std::string& split, std::int64_t index, std::int64_t count);

// Writes one shard atomically (temporary file, then rename).
void write_shard(const std::string& path, const ShardMeta& meta, const std::uint8_t* images,
                 const std::int32_t* labels);

// Reads and validates a shard's attributes and dataset shapes; errors name the file and the problem.
ShardMeta read_shard_meta(const std::string& path);

}  // namespace ft
