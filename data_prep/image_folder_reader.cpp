// Image folders -> RGB NHWC splits: checks the whole tree first, then decodes in a fixed class-interleaved
// order, so shards are byte-reproducible and every prefix, shard and rank slice is class-balanced.
#include "data_prep/image_folder_reader.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "data_prep/image_codec.h"
#include "data_prep/input_files.h"
#include "data_prep/transforms.h"
#include "io/paths.h"
#include "runtime/error.h"

namespace ft::prep {
namespace {

std::vector<std::string> class_folders(const std::string& split_dir) {
  require_directory(split_dir);
  std::vector<std::string> names;
  for (const std::string& name : paths::list_directory(split_dir))
    if (name.front() != '.' && paths::is_directory(paths::join(split_dir, name))) names.push_back(name);
  FT_REQUIRE(!names.empty(), split_dir, ": has no class folders (expected ", split_dir,
             "/<class>/*.jpg|*.png)");
  return names;
}

// (path, label) of every image of a split, each class's files sorted by name, the classes interleaved:
// class 0's first file, class 1's first, ..., then every class's second file, and so on.
std::vector<std::pair<std::string, int>> list_images(const std::string& split_dir,
                                                     const std::vector<std::string>& classes) {
  std::vector<std::vector<std::string>> per_class;
  std::size_t total = 0, longest = 0;
  for (const auto& name : classes) {
    const std::string class_dir = paths::join(split_dir, name);
    std::vector<std::string> files;
    for (const std::string& file : paths::list_directory(class_dir)) {
      const std::string path = paths::join(class_dir, file);
      if (file.front() != '.' && has_image_extension(file) && paths::is_regular_file(path)) files.push_back(path);
    }
    FT_REQUIRE(!files.empty(), class_dir, ": class folder has no .jpg, .jpeg or .png images");
    std::sort(files.begin(), files.end());
    total += files.size();
    longest = std::max(longest, files.size());
    per_class.push_back(std::move(files));
  }
  std::vector<std::pair<std::string, int>> images;
  images.reserve(total);
  for (std::size_t i = 0; i < longest; ++i)
    for (std::size_t label = 0; label < per_class.size(); ++label)
      if (i < per_class[label].size()) images.emplace_back(per_class[label][i], static_cast<int>(label));
  return images;
}

void require_same_classes(const std::string& test_dir, const std::vector<std::string>& test_classes,
                          const std::string& train_dir, const std::vector<std::string>& train_classes) {
  for (const auto& name : train_classes)
    FT_REQUIRE(std::binary_search(test_classes.begin(), test_classes.end(), name), test_dir,
               ": has no class folder '", name, "' but ", train_dir, " has");
  for (const auto& name : test_classes)
    FT_REQUIRE(std::binary_search(train_classes.begin(), train_classes.end(), name), test_dir,
               ": has class folder '", name, "' that ", train_dir, " lacks");
}

// Where the first decoded image came from and its size, which every later one must match.
struct SizeReference {
  std::string path;
  int height = 0, width = 0;
};

RawSplit decode_split(const std::vector<std::pair<std::string, int>>& images, int resize,
                      SizeReference& reference, ImageDecoder& decoder, std::vector<std::string>& sources) {
  RawSplit split;
  for (const auto& [path, label] : images) {
    RgbImage image = decoder.decode(read_bytes(path), path);
    sources.push_back(path);
    if (resize > 0 && (image.height != resize || image.width != resize)) {
      image.pixels = resize_image(image.pixels.data(), image.height, image.width, 3, resize, resize);
      image.height = image.width = resize;
    }
    if (reference.path.empty()) reference = {path, image.height, image.width};
    FT_REQUIRE(image.height == reference.height && image.width == reference.width, path, ": image is ",
               image.width, "x", image.height, " but ", reference.path, " is ", reference.width, "x",
               reference.height, " (all images must share one size; pass --resize S to resize them)");
    if (split.count() == 0)
      split.reset(image.height, image.width, 3, static_cast<std::int64_t>(images.size()));
    split.images.insert(split.images.end(), image.pixels.begin(), image.pixels.end());
    split.labels.push_back(label);
  }
  return split;
}

}  // namespace

RawDataset read_image_folder(const std::string& input, int resize, std::int64_t limit) {
  require_directory(input);
  const std::string train_dir = paths::join(input, "train"), test_dir = paths::join(input, "test");
  RawDataset ds;
  ds.class_names = class_folders(train_dir);
  require_same_classes(test_dir, class_folders(test_dir), train_dir, ds.class_names);
  auto train_images = list_images(train_dir, ds.class_names);
  auto test_images = list_images(test_dir, ds.class_names);
  train_images.resize(static_cast<std::size_t>(std::min<std::int64_t>(limit, train_images.size())));
  test_images.resize(static_cast<std::size_t>(std::min<std::int64_t>(limit, test_images.size())));

  ImageDecoder decoder;
  SizeReference reference;
  ds.train = decode_split(train_images, resize, reference, decoder, ds.source_files);
  ds.test = decode_split(test_images, resize, reference, decoder, ds.source_files);
  return ds;
}

}  // namespace ft::prep
