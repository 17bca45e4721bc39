// Shard discovery and cross-file range reads. Every inconsistency (a missing shard, a shard from another
// data set, a label out of range) is reported with the offending file before any training starts.
#include "shard/shard_reader.h"

#include <algorithm>
#include <regex>

#include "io/paths.h"
#include "io/h5.h"

namespace ft {

std::pair<std::int64_t, std::int64_t> slice_of(std::int64_t total, int rank, int world) {
  const std::int64_t base = total / world, extra = total % world;
  const std::int64_t begin = rank * base + std::min<std::int64_t>(rank, extra);
  return {begin, begin + base + (rank < extra ? 1 : 0)};
}

ShardReader::ShardReader(const std::string& dir, const std::string& split) {
  FT_REQUIRE(paths::exists(dir), "data directory ", dir,
             " does not exist (set data.path to a folder written by fusetrain-prep)");
  FT_REQUIRE(paths::is_directory(dir), "data directory ", dir, " is a file, not a folder: point data.path (or --data) ",
             "at the folder that holds the shards (", paths::parent(dir).empty() ? "." : paths::parent(dir), "?)");
  const std::regex pattern(split + R"(-(\d+)-of-(\d+)\.h5)");
  std::vector<std::pair<std::int64_t, std::string>> found;
  std::int64_t declared = -1;
  for (const std::string& name : paths::list_directory(dir)) {
    std::smatch m;
    if (!std::regex_match(name, m, pattern)) continue;
    const std::int64_t of = std::stoll(m[2].str());
    FT_REQUIRE(declared < 0 || declared == of, "data directory ", dir, " mixes shard sets: ", name,
               " says of-", of, " but others say of-", declared);
    declared = of;
    found.emplace_back(std::stoll(m[1].str()), paths::join(dir, name));
  }
  FT_REQUIRE(!found.empty(), "data directory ", dir, " has no ", split, "-*-of-*.h5 shards");
  std::sort(found.begin(), found.end());
  for (std::int64_t i = 0; i < declared; ++i) {
    const bool present = i < static_cast<std::int64_t>(found.size()) && found[i].first == i;
    FT_REQUIRE(present, "data directory ", dir, " is missing shard ", shard_file_name(split, i, declared));
  }
  FT_REQUIRE(static_cast<std::int64_t>(found.size()) == declared, "data directory ", dir, " has ",
             found.size(), " ", split, " shards but their names say ", declared);

  for (const auto& [index, path] : found) {
    ShardMeta m = read_shard_meta(path);
    FT_REQUIRE(m.split == split, path, ": split attribute is '", m.split, "', expected '", split, "'");
    FT_REQUIRE(m.shard_index == index && m.shard_count == declared, path, ": attributes say shard ",
               m.shard_index, " of ", m.shard_count, " but the name says ", index, " of ", declared);
    if (files_.empty()) {
      meta_ = m;
    } else {
      FT_REQUIRE(m.dataset == meta_.dataset && m.height == meta_.height && m.width == meta_.width &&
                     m.channels == meta_.channels && m.class_names == meta_.class_names,
                 path, ": data set, image shape or classes differ from ", files_.front());
    }
    starts_.push_back(total_);
    files_.push_back(path);
    total_ += m.count;
  }
  meta_.count = total_;
  meta_.shard_index = 0;
  FT_REQUIRE(total_ > 0, "the ", split, " split in ", dir, " holds no images");
}

HostSplit ShardReader::read(std::int64_t begin, std::int64_t end) const {
  FT_CHECK(begin >= 0 && begin <= end && end <= total_, "range [", begin, ", ", end, ") outside 0..", total_);
  HostSplit out;
  out.meta = meta_;
  out.total = total_;
  out.first = begin;
  out.meta.count = end - begin;
  const std::int64_t pixels = std::int64_t{meta_.height} * meta_.width * meta_.channels;
  out.images.resize(static_cast<std::size_t>((end - begin) * pixels));
  out.labels.resize(static_cast<std::size_t>(end - begin));
  for (std::size_t f = 0; f < files_.size(); ++f) {
    const std::int64_t file_begin = starts_[f];
    const std::int64_t file_end = f + 1 < files_.size() ? starts_[f + 1] : total_;
    const std::int64_t lo = std::max(begin, file_begin), hi = std::min(end, file_end);
    if (lo >= hi) continue;
    try {
      h5::Handle file = h5::open_file(files_[f]);
      const auto row = static_cast<hsize_t>(lo - file_begin), rows = static_cast<hsize_t>(hi - lo);
      h5::read_rows(file, "images", row, rows, out.images.data() + (lo - begin) * pixels);
      h5::read_rows(file, "labels", row, rows, out.labels.data() + (lo - begin));
    } catch (const Error& e) {
      throw Error(cat(files_[f], ": ", e.what()));
    }
    const auto classes = static_cast<std::int32_t>(meta_.class_names.size());
    for (std::int64_t i = lo; i < hi; ++i) {
      const std::int32_t label = out.labels[static_cast<std::size_t>(i - begin)];
      FT_REQUIRE(label >= 0 && label < classes, files_[f], ": label ", label, " of image ", i - file_begin,
                 " is outside 0..", classes - 1, " (", classes, " class names)");
    }
  }
  return out;
}

}  // namespace ft
