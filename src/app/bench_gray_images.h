// Inputs and outputs of the RGB -> gray study: real images from a shard folder resized to a square, and
// sample images written as PNG.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace ft {

// The first `count` images of `split` in the shard folder `dir`, resized (bilinear) to size x size and
// returned as interleaved uint8 RGB (one-channel data sets are repeated into three channels).
std::vector<std::uint8_t> load_rgb_images(const std::string& dir, const std::string& split, std::int64_t count,
                                          int size, std::int64_t* loaded);

// Writes an 8-bit PNG (channels 1: gray, 3: RGB) through an atomic file; throws ft::Error naming the path.
void write_png(const std::string& path, const std::uint8_t* pixels, int width, int height, int channels);

}  // namespace ft
