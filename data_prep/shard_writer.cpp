// Statistics, sharding and the all-or-nothing commit of a shard set. Staging every shard before the
// first rename means a failed or interrupted run never leaves a mix of old and new shards behind.
#include "data_prep/shard_writer.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <regex>

#include "io/paths.h"
#include "shard/shard_format.h"
#include "shard/shard_reader.h"
#include "runtime/error.h"

namespace ft::prep {
namespace {

// A fresh folder, removed with whatever it still holds on scope exit (empty after a full commit).
class StagingDir {
 public:
  explicit StagingDir(std::string path) : path_(std::move(path)) {
    paths::remove_all(path_);
    FT_REQUIRE(::mkdir(path_.c_str(), 0777) == 0, path_, ": cannot create the staging folder: ",
               std::strerror(errno));
  }
  ~StagingDir() {
    try {
      paths::remove_all(path_);
    } catch (const Error& e) {
      std::fprintf(stderr, "fusetrain-prep: warning: %s\n", e.what());
    }
  }
  StagingDir(const StagingDir&) = delete;
  StagingDir& operator=(const StagingDir&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

void require_shardable(const RawSplit& split, const std::string& name, std::int64_t shards) {
  FT_REQUIRE(split.count() > 0, "the ", name, " split holds no images");
  FT_REQUIRE(shards <= split.count(), "--shards ", shards, " is more than the ", split.count(),
             " images of the ", name, " split");
}

void write_split(const RawSplit& split, const std::string& name, const RawDataset& ds,
                 const ShardSetSpec& spec, const ChannelStats& stats, const std::string& dir,
                 std::vector<std::string>& names) {
  for (std::int64_t k = 0; k < spec.shards; ++k) {
    const auto [begin, end] = slice_of(split.count(), static_cast<int>(k), static_cast<int>(spec.shards));
    ShardMeta meta;
    meta.dataset = spec.dataset;
    meta.split = name;
    meta.class_names = ds.class_names;
    meta.mean = stats.mean;
    meta.std = stats.std;
    meta.shard_index = k;
    meta.shard_count = spec.shards;
    meta.source_sha256 = spec.source_sha256;
    meta.count = end - begin;
    meta.height = split.height;
    meta.width = split.width;
    meta.channels = split.channels;
    const std::string file = shard_file_name(name, k, spec.shards);
    write_shard(paths::join(dir, file), meta, split.images.data() + begin * split.image_bytes(),
                split.labels.data() + begin);
    names.push_back(file);
  }
}

// Removes train/test shards in dir that are not among `keep` (left over from another shard count).
void remove_stale_shards(const std::string& dir, const std::vector<std::string>& keep) {
  const std::regex shard_name(R"((train|test)-\d+-of-\d+\.h5)");
  for (const std::string& name : paths::list_directory(dir)) {
    if (!std::regex_match(name, shard_name) || std::find(keep.begin(), keep.end(), name) != keep.end()) continue;
    const std::string path = paths::join(dir, name);
    FT_REQUIRE(::remove(path.c_str()) == 0, path, ": cannot remove this shard of an earlier run: ",
               std::strerror(errno));
  }
}

}  // namespace

ChannelStats channel_stats(const RawSplit& split) {
  const auto c = static_cast<std::size_t>(split.channels);
  std::vector<std::uint64_t> sum(c, 0), sum_sq(c, 0);
  for (std::size_t pixel = 0; pixel < split.images.size(); pixel += c) {
    for (std::size_t k = 0; k < c; ++k) {
      const std::uint64_t v = split.images[pixel + k];
      sum[k] += v;
      sum_sq[k] += v * v;
    }
  }
  ChannelStats stats;
  const double n = static_cast<double>(split.images.size() / c);
  for (std::size_t k = 0; k < c; ++k) {
    const double mean = static_cast<double>(sum[k]) / n / 255.0;
    const double mean_sq = static_cast<double>(sum_sq[k]) / n / (255.0 * 255.0);
    stats.mean.push_back(mean);
    stats.std.push_back(std::sqrt(std::max(0.0, mean_sq - mean * mean)));
  }
  return stats;
}

WrittenShards write_shard_set(const RawDataset& ds, const ShardSetSpec& spec, const std::string& output_dir) {
  FT_CHECK(spec.shards >= 1, "shard count must be at least 1, not ", spec.shards);
  FT_REQUIRE(ds.train.height == ds.test.height && ds.train.width == ds.test.width &&
                 ds.train.channels == ds.test.channels,
             "train images are ", ds.train.width, "x", ds.train.height, "x", ds.train.channels,
             " but test images are ", ds.test.width, "x", ds.test.height, "x", ds.test.channels);
  require_shardable(ds.train, "train", spec.shards);
  require_shardable(ds.test, "test", spec.shards);
  const std::string failure = paths::try_create_directories(output_dir);
  FT_REQUIRE(failure.empty(), output_dir, ": cannot create the output folder: ", failure,
             paths::exists(output_dir) ? " (a file of that name exists)" : "");

  WrittenShards written;
  written.stats = channel_stats(ds.train);
  StagingDir staging(paths::join(output_dir, ".partial-" + std::to_string(getpid())));
  std::vector<std::string> names;
  write_split(ds.train, "train", ds, spec, written.stats, staging.path(), names);
  write_split(ds.test, "test", ds, spec, written.stats, staging.path(), names);
  for (const auto& name : names) {
    const std::string target = paths::join(output_dir, name);
    if (::rename(paths::join(staging.path(), name).c_str(), target.c_str()) != 0) {
      const std::string reason = std::strerror(errno);
      // Leave no part of the new set behind, so readers never see new and old shards mixed.
      for (const auto& moved : written.files) ::remove(moved.c_str());
      throw Error(cat(target, ": cannot move the new shard into place: ", reason));
    }
    written.files.push_back(target);
  }
  remove_stale_shards(output_dir, names);
  return written;
}

}  // namespace ft::prep
