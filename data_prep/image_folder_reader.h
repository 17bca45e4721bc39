// Reader for image-folder data sets laid out as DIR/train/<class>/*.{jpg,jpeg,png} and
// DIR/test/<class>/..., the layout of torchvision's ImageFolder and of most exported image sets.
#pragma once

#include <cstdint>
#include <string>

#include "data_prep/raw_split.h"

namespace ft::prep {

// Classes are the sorted sub-folder names of train (label = position); test must have the same ones.
// Each class's files are sorted by name and the classes are interleaved (first file of every class,
// then the second, ...), so `limit` and contiguous shards stay class-balanced. Images are decoded to
// RGB; with resize > 0 each is resized to resize x resize, otherwise all must share one size.
RawDataset read_image_folder(const std::string& input, int resize = 0, std::int64_t limit = kNoLimit);

}  // namespace ft::prep
