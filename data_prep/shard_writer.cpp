// Statistics, sharding and the all-or-nothing commit of a shard set. Staging every shard before the
// first rename means a failed or interrupted run never leaves a mix of old and new shards behind.
#include "data_prep/shard_writer.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <regex>

#include "data/shard_format.h"
#include "data/shard_reader.h"
#include "runtime/error.h"

namespace ft::prep {
namespace {

namespace fs = std::filesystem;

// A fresh folder, removed with whatever it still holds on scope exit (empty after a full commit).
class StagingDir {
 public:
  explicit StagingDir(fs::path path) : path_(std::move(path)) {
    std::error_code ec;
    fs::remove_all(path_, ec);
    fs::create_directory(path_, ec);
    FT_REQUIRE(!ec, path_.string(), ": cannot create the staging folder: ", ec.message());
  }
  ~StagingDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  StagingDir(const StagingDir&) = delete;
  StagingDir& operator=(const StagingDir&) = delete;
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

void require_shardable(const RawSplit& split, const std::string& name, std::int64_t shards) {
  FT_REQUIRE(split.count() > 0, "the ", name, " split holds no images");
  FT_REQUIRE(shards <= split.count(), "--shards ", shards, " is more than the ", split.count(),
             " images of the ", name, " split");
}

void write_split(const RawSplit& split, const std::string& name, const RawDataset& ds,
                 const ShardSetSpec& spec, const ChannelStats& stats, const fs::path& dir,
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
    write_shard((dir / file).string(), meta, split.images.data() + begin * split.image_bytes(),
                split.labels.data() + begin);
    names.push_back(file);
  }
}

// Removes train/test shards in dir that are not among `keep` (left over from another shard count).
void remove_stale_shards(const fs::path& dir, const std::vector<std::string>& keep) {
  const std::regex shard_name(R"((train|test)-\d+-of-\d+\.h5)");
  for (const auto& entry : fs::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    if (std::regex_match(name, shard_name) && std::find(keep.begin(), keep.end(), name) == keep.end()) {
      std::error_code ec;
      fs::remove(entry.path(), ec);
      FT_REQUIRE(!ec, entry.path().string(), ": cannot remove this shard of an earlier run: ", ec.message());
    }
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
  std::error_code ec;
  fs::create_directories(output_dir, ec);
  FT_REQUIRE(!ec && fs::is_directory(output_dir), output_dir, ": cannot create the output folder",
             ec ? ": " + ec.message() : std::string(" (a file of that name exists)"));

  WrittenShards written;
  written.stats = channel_stats(ds.train);
  StagingDir staging(fs::path(output_dir) / (".partial-" + std::to_string(getpid())));
  std::vector<std::string> names;
  write_split(ds.train, "train", ds, spec, written.stats, staging.path(), names);
  write_split(ds.test, "test", ds, spec, written.stats, staging.path(), names);
  for (const auto& name : names) {
    const fs::path target = fs::path(output_dir) / name;
    fs::rename(staging.path() / name, target, ec);
    if (ec) {
      const std::string reason = ec.message();
      // Leave no part of the new set behind, so readers never see new and old shards mixed.
      for (const auto& moved : written.files) fs::remove(moved, ec);
      throw Error(cat(target.string(), ": cannot move the new shard into place: ", reason));
    }
    written.files.push_back(target.string());
  }
  remove_stale_shards(output_dir, names);
  return written;
}

}  // namespace ft::prep
