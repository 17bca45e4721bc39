// Writing and validating single shard files against the schema in shard_format.h.
// Readers never trust a shard: version, dtypes, shapes and label range are checked on open.
#include "shard/shard_format.h"

#include <cstdio>

#include "io/atomic_file.h"
#include "io/h5.h"

namespace ft {

std::string shard_file_name(const std::string& split, std::int64_t index, std::int64_t count) {
  char name[96];
  std::snprintf(name, sizeof(name), "%s-%05lld-of-%05lld.h5", split.c_str(),
                static_cast<long long>(index), static_cast<long long>(count));
  return name;
}

void write_shard(const std::string& path, const ShardMeta& meta, const std::uint8_t* images,
                 const std::int32_t* labels) {
  AtomicFile out(path);
  {
    h5::Handle file = h5::create_file(out.temp_path());
    const auto n = static_cast<hsize_t>(meta.count);
    const auto h = static_cast<hsize_t>(meta.height), w = static_cast<hsize_t>(meta.width),
               c = static_cast<hsize_t>(meta.channels);
    // One chunk per 256 images keeps hyperslab reads of a rank's slice cheap.
    const hsize_t rows = n == 0 ? 1 : std::min<hsize_t>(n, 256);
    h5::write(file, "images", images, {n, h, w, c}, {rows, h, w, c});
    h5::write(file, "labels", labels, {n});
    h5::set_attr(file, "dataset", meta.dataset);
    h5::set_attr(file, "split", meta.split);
    h5::set_attr(file, "class_names", meta.class_names);
    h5::set_attr(file, "mean", meta.mean);
    h5::set_attr(file, "std", meta.std);
    h5::set_attr(file, "shard_index", meta.shard_index);
    h5::set_attr(file, "shard_count", meta.shard_count);
    h5::set_attr(file, "source_sha256", meta.source_sha256);
    h5::set_attr(file, "format_version", meta.format_version);
    file.close();
  }
  out.commit();
}

ShardMeta read_shard_meta(const std::string& path) {
  h5::Handle file = h5::open_file(path);
  ShardMeta meta;
  try {
    meta.format_version = h5::attr_int(file, "format_version");
    FT_REQUIRE(meta.format_version == kShardFormatVersion, "format_version is ", meta.format_version,
               " but this fusetrain reads version ", kShardFormatVersion,
               " (re-run fusetrain-prep)");
    meta.dataset = h5::attr_string(file, "dataset");
    meta.split = h5::attr_string(file, "split");
    meta.class_names = h5::attr_strings(file, "class_names");
    meta.mean = h5::attr_doubles(file, "mean");
    meta.std = h5::attr_doubles(file, "std");
    meta.shard_index = h5::attr_int(file, "shard_index");
    meta.shard_count = h5::attr_int(file, "shard_count");
    meta.source_sha256 = h5::attr_string(file, "source_sha256");

    const auto image_dims = h5::dims(file, "images");
    FT_REQUIRE(image_dims.size() == 4, "/images has rank ", image_dims.size(),
               ", expected 4 (N,H,W,C)");
    const auto [image_class, image_size] = h5::element_type(file, "images");
    FT_REQUIRE(image_class == H5T_INTEGER && image_size == 1, "/images must be uint8");
    const auto label_dims = h5::dims(file, "labels");
    FT_REQUIRE(label_dims.size() == 1 && label_dims[0] == image_dims[0], "/labels has shape [",
               label_dims.empty() ? 0 : label_dims[0], "] but /images holds ", image_dims[0],
               " images");
    const auto [label_class, label_size] = h5::element_type(file, "labels");
    FT_REQUIRE(label_class == H5T_INTEGER, "/labels must be integers");
    (void)label_size;
    meta.count = static_cast<std::int64_t>(image_dims[0]);
    meta.height = static_cast<int>(image_dims[1]);
    meta.width = static_cast<int>(image_dims[2]);
    meta.channels = static_cast<int>(image_dims[3]);
    FT_REQUIRE(meta.channels == 1 || meta.channels == 3, "/images has ", meta.channels,
               " channels, expected 1 or 3");
    FT_REQUIRE(meta.mean.size() == static_cast<std::size_t>(meta.channels) &&
                   meta.std.size() == static_cast<std::size_t>(meta.channels),
               "mean/std attributes must have one value per channel (", meta.channels, ")");
    FT_REQUIRE(!meta.class_names.empty(), "class_names attribute is empty");
    FT_REQUIRE(meta.shard_index >= 0 && meta.shard_index < meta.shard_count, "shard_index ",
               meta.shard_index, " is outside shard_count ", meta.shard_count);
  } catch (const Error& e) {
    throw Error(cat(path, ": ", e.what()));
  }
  return meta;
}

}  // namespace ft
