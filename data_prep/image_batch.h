// Image files turned into a network's input: decoded with fusetrain-prep's codec, resized with its
// resize_image and made gray with its grayscale rule, so an image reaches the network as prep stores it.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "data_prep/image_codec.h"
#include "data_prep/raw_split.h"

namespace ft::prep {

// What a network takes: height x width pixels of 1 (gray) or 3 (RGB) channels.
struct ImageShape {
  int height = 0, width = 0, channels = 0;
};

// Whether an image of height x width decoded from `path` must be resized to reach `target`. A size
// other than the target's is an ft::Error naming the file and both sizes when allow_resize is false.
bool needs_resize(int height, int width, const ImageShape& target, bool allow_resize, const std::string& path);

// Decodes batches of files into `target`'s shape, counting the images it resized by their source size.
// A 1-channel target gets prep's BT.601 gray (grayscale_split); a 3-channel one the decoded RGB, gray
// files included (the decoder replicates them).
class ImageBatchLoader {
 public:
  // Throws ft::Error unless target.channels is 1 or 3.
  ImageBatchLoader(ImageShape target, bool allow_resize);

  // The images of `files` (in order) as one NHWC split of the target's shape, labels all 0. Errors name
  // the file: unreadable, neither JPEG nor PNG, corrupt, or of another size without allow_resize.
  RawSplit load(const std::vector<std::string>& files);

  // The same, leaving out the files load() would throw on: `kept` lists the files of the split's images
  // in order, `bad` the others with the error that names each.
  struct Partial {
    RawSplit split;
    std::vector<std::string> kept;
    std::vector<std::string> bad;
  };
  Partial load_readable(const std::vector<std::string>& files);

  std::int64_t resized_count() const;
  // "" when nothing was resized, else e.g. "resized 3 images to 28x28: 1 of 32x32, 2 of 64x48" (by size).
  std::string resize_note() const;

 private:
  ImageShape target_;
  bool allow_resize_;
  // Appends the RGB pixels of `path`, fitted to the target's size, to `split`.
  void append(const std::string& path, RawSplit& split);

  ImageDecoder decoder_;
  std::map<std::pair<int, int>, std::int64_t> resized_;  // (width, height) -> images of that size
};

}  // namespace ft::prep
