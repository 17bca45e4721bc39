// Pixel transforms applied between reading and writing: resizing to a square size (bilinear when
// enlarging, area averaging when shrinking) and BT.601 grayscale conversion.
#pragma once

#include <cstdint>
#include <vector>

#include "data_prep/raw_split.h"

namespace ft::prep {

// Resizes one HWC uint8 image. Each axis is resampled on its own: bilinear with half-pixel centres
// (OpenCV INTER_LINEAR, PyTorch align_corners=False) where it grows or keeps its size, the average
// over each output pixel's footprint (OpenCV INTER_AREA) where it shrinks. Results round to nearest.
std::vector<std::uint8_t> resize_image(const std::uint8_t* image, int height, int width, int channels,
                                       int out_height, int out_width);

// Resizes every image of the split to size x size.
void resize_split(RawSplit& split, int size);

// Converts a 3-channel split to 1 channel with ft::rgb_to_gray_cpu, or ft::rgb_to_gray_staged when a GPU
// is available (bit-identical). A 1-channel split is left as it is.
void grayscale_split(RawSplit& split);

}  // namespace ft::prep
