// Rewrites one shard written by fusetrain-prep with a single schema defect, so that the failure tests can
// check the message training prints for it: shard_mutator MODE FILE (modes listed in usage()).
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "io/atomic_file.h"
#include "io/h5.h"
#include "io/paths.h"
#include "shard/shard_format.h"

namespace {

const char* usage() {
  return "usage: shard_mutator MODE FILE\n"
         "modes: float-images | rank3-images | format-version | no-labels | empty | bad-label | other-dataset\n";
}

void write_attributes(hid_t file, const ft::ShardMeta& m) {
  ft::h5::set_attr(file, "dataset", m.dataset);
  ft::h5::set_attr(file, "split", m.split);
  ft::h5::set_attr(file, "class_names", m.class_names);
  ft::h5::set_attr(file, "mean", m.mean);
  ft::h5::set_attr(file, "std", m.std);
  ft::h5::set_attr(file, "shard_index", m.shard_index);
  ft::h5::set_attr(file, "shard_count", m.shard_count);
  ft::h5::set_attr(file, "source_sha256", m.source_sha256);
  ft::h5::set_attr(file, "format_version", m.format_version);
}

void mutate(const std::string& mode, const std::string& path) {
  ft::ShardMeta meta = ft::read_shard_meta(path);
  std::vector<std::uint8_t> images;
  std::vector<std::int32_t> labels;
  {
    ft::h5::Handle in = ft::h5::open_file(path);
    images = ft::h5::read_all<std::uint8_t>(in, "images");
    labels = ft::h5::read_all<std::int32_t>(in, "labels");
  }
  const auto n = static_cast<hsize_t>(meta.count), h = static_cast<hsize_t>(meta.height),
             w = static_cast<hsize_t>(meta.width), c = static_cast<hsize_t>(meta.channels);
  if (mode == "empty") meta.count = 0, images.clear(), labels.clear();
  if (mode == "bad-label") labels.at(labels.size() / 2) = static_cast<std::int32_t>(meta.class_names.size());
  if (mode == "format-version") meta.format_version = ft::kShardFormatVersion + 1;
  if (mode == "other-dataset") meta.dataset = "cifar10";
  if (mode == "empty" || mode == "bad-label" || mode == "format-version" || mode == "other-dataset") {
    ft::paths::remove(path);
    ft::write_shard(path, meta, images.data(), labels.data());
    return;
  }
  ft::AtomicFile out(path);
  {
    ft::h5::Handle file = ft::h5::create_file(out.temp_path());
    if (mode == "float-images") {
      const std::vector<float> as_float(images.begin(), images.end());
      ft::h5::write(file, "images", as_float.data(), {n, h, w, c});
    } else if (mode == "rank3-images") {
      ft::h5::write(file, "images", images.data(), {n, h, w * c});
    } else if (mode == "no-labels") {
      ft::h5::write(file, "images", images.data(), {n, h, w, c});
    } else {
      throw ft::Error("unknown mode '" + mode + "'");
    }
    if (mode != "no-labels") ft::h5::write(file, "labels", labels.data(), {n});
    write_attributes(file, meta);
  }
  out.commit();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) return std::fputs(usage(), stderr), 2;
  try {
    mutate(argv[1], argv[2]);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "shard_mutator: %s\n%s", e.what(), usage());
    return 1;
  }
  return 0;
}
