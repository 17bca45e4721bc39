// Turns a prepared data set into its HDF5 shard set: train-split statistics, near-equal contiguous
// shards of both splits, written into a staging folder and renamed into place only when all succeeded.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "data_prep/raw_split.h"

namespace ft::prep {

// Per-channel mean and population standard deviation in [0,1] pixel units.
struct ChannelStats {
  std::vector<double> mean, std;
};
ChannelStats channel_stats(const RawSplit& split);

struct ShardSetSpec {
  std::string dataset;        // the shards' dataset attribute
  std::string source_sha256;  // of the raw input files
  std::int64_t shards = 1;    // per split
};

struct WrittenShards {
  ChannelStats stats;              // of the train split, stored in every shard
  std::vector<std::string> files;  // final paths, train shards first
};

// Writes `spec.shards` shards of each split (ft::shard_file_name names, ft::slice_of ranges) into
// output_dir. They are written to output_dir/.partial-<pid>/ and renamed into place at the end; on
// failure that folder is removed and output_dir holds no new shard. Shards of an earlier run with
// another shard count are deleted once the new set is in place, so the folder holds one set.
WrittenShards write_shard_set(const RawDataset& ds, const ShardSetSpec& spec, const std::string& output_dir);

}  // namespace ft::prep
