// STL-10 binary -> NHWC images. The release was written from MATLAB, hence the column-major pixel
// order; this file transposes it and checks that image and label files agree in count.
#include "data_prep/stl10_reader.h"

#include <vector>

#include "data_prep/input_files.h"
#include "io/paths.h"
#include "runtime/error.h"

namespace ft::prep {
namespace {

constexpr int kStlSide = 96, kStlPlane = kStlSide * kStlSide, kStlImageBytes = 3 * kStlPlane, kStlClasses = 10;

RawSplit read_stl10_split(const std::string& images_path, const std::string& labels_path, std::int64_t limit,
                    std::vector<std::string>& sources) {
  const auto image_size = file_size(images_path), label_size = file_size(labels_path);
  FT_REQUIRE(image_size > 0, images_path, ": file is empty");
  FT_REQUIRE(image_size % kStlImageBytes == 0, images_path, ": size ", image_size,
             " bytes is not a multiple of the ", kStlImageBytes,
             "-byte 96x96x3 image: the last image is truncated");
  const auto count = static_cast<std::int64_t>(image_size / kStlImageBytes);
  FT_REQUIRE(static_cast<std::int64_t>(label_size) == count, labels_path, ": holds ", label_size,
             " labels but ", images_path, " holds ", count, " images");

  const std::vector<std::uint8_t> labels = read_bytes(labels_path);
  const std::vector<std::uint8_t> images = read_bytes(images_path);
  sources.push_back(images_path);
  sources.push_back(labels_path);

  RawSplit split;
  const std::int64_t n = std::min(count, limit);
  split.reset(kStlSide, kStlSide, 3, n);
  split.images.resize(static_cast<std::size_t>(n) * kStlImageBytes);
  for (std::int64_t i = 0; i < n; ++i) {
    const int label = labels[static_cast<std::size_t>(i)];
    FT_REQUIRE(label >= 1 && label <= kStlClasses, labels_path, ": label ", label, " of image ", i,
               " is outside 1..", kStlClasses);
    split.labels.push_back(label - 1);
    const std::uint8_t* in = images.data() + i * kStlImageBytes;
    std::uint8_t* out = split.images.data() + i * kStlImageBytes;
    for (int c = 0; c < 3; ++c)
      for (int x = 0; x < kStlSide; ++x)
        for (int y = 0; y < kStlSide; ++y) out[(y * kStlSide + x) * 3 + c] = in[c * kStlPlane + x * kStlSide + y];
  }
  return split;
}

}  // namespace

RawDataset read_stl10(const std::string& input, std::int64_t limit) {
  const std::string dir = release_dir(input, "stl10_binary");
  const std::string expected =
      "the STL-10 binary release has train_X.bin, train_y.bin, test_X.bin, test_y.bin";
  const std::string files[4] = {paths::join(dir, "train_X.bin"), paths::join(dir, "train_y.bin"),
                                paths::join(dir, "test_X.bin"), paths::join(dir, "test_y.bin")};
  for (const auto& path : files) require_file(path, expected);

  RawDataset ds;
  ds.class_names = class_names_or(
      paths::join(dir, "class_names.txt"),
      {"airplane", "bird", "car", "cat", "deer", "dog", "horse", "monkey", "ship", "truck"}, ds.source_files);
  ds.train = read_stl10_split(files[0], files[1], limit, ds.source_files);
  ds.test = read_stl10_split(files[2], files[3], limit, ds.source_files);
  return ds;
}

}  // namespace ft::prep
