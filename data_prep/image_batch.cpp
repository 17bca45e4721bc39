// Decoding and fitting of image files batch by batch: RGB decode, resize in RGB, then the whole batch
// through grayscale_split for a 1-channel network, the order fusetrain-prep applies them in.
#include "data_prep/image_batch.h"

#include "data_prep/input_files.h"
#include "data_prep/transforms.h"
#include "runtime/error.h"

namespace ft::prep {

bool needs_resize(int height, int width, const ImageShape& target, bool allow_resize, const std::string& path) {
  if (height == target.height && width == target.width) return false;
  FT_REQUIRE(allow_resize, path, ": image is ", width, "x", height, " but the network takes ", target.width,
             "x", target.height, " (--no-resize refuses other sizes)");
  return true;
}

ImageBatchLoader::ImageBatchLoader(ImageShape target, bool allow_resize)
    : target_(target), allow_resize_(allow_resize) {
  FT_REQUIRE(target.channels == 1 || target.channels == 3, "the network takes ", target.channels,
             "-channel images; image files can feed only 1 (gray) or 3 (RGB) channels");
}

void ImageBatchLoader::append(const std::string& path, RawSplit& split) {
  RgbImage image = decoder_.decode(read_bytes(path), path);
  if (needs_resize(image.height, image.width, target_, allow_resize_, path)) {
    ++resized_[{image.width, image.height}];
    image.pixels = resize_image(image.pixels.data(), image.height, image.width, 3, target_.height, target_.width);
  }
  split.images.insert(split.images.end(), image.pixels.begin(), image.pixels.end());
  split.labels.push_back(0);
}

RawSplit ImageBatchLoader::load(const std::vector<std::string>& files) {
  RawSplit split;
  split.reset(target_.height, target_.width, 3, static_cast<std::int64_t>(files.size()));
  for (const std::string& path : files) append(path, split);
  if (target_.channels == 1) grayscale_split(split);
  return split;
}

ImageBatchLoader::Partial ImageBatchLoader::load_readable(const std::vector<std::string>& files) {
  Partial out;
  out.split.reset(target_.height, target_.width, 3, static_cast<std::int64_t>(files.size()));
  for (const std::string& path : files) {
    try {
      append(path, out.split);
      out.kept.push_back(path);
    } catch (const Error& e) {
      out.bad.push_back(e.what());
    }
  }
  if (target_.channels == 1) grayscale_split(out.split);
  return out;
}

std::int64_t ImageBatchLoader::resized_count() const {
  std::int64_t n = 0;
  for (const auto& [size, count] : resized_) n += count;
  return n;
}

std::string ImageBatchLoader::resize_note() const {
  const std::int64_t total = resized_count();
  if (total == 0) return "";
  std::string sizes;
  for (const auto& [size, count] : resized_)
    sizes += cat(sizes.empty() ? "" : ", ", count, " of ", size.first, "x", size.second);
  return cat("resized ", total, total == 1 ? " image" : " images", " to ", target_.width, "x", target_.height,
             ": ", sizes);
}

}  // namespace ft::prep
