// Reader for the STL-10 binary release (stl10_binary/): 96x96 RGB images stored channel-major with
// each channel in column-major order, and one label byte 1..10 per image in a separate file.
#pragma once

#include <cstdint>
#include <string>

#include "data_prep/raw_split.h"

namespace ft::prep {

// train_X.bin/train_y.bin and test_X.bin/test_y.bin; byte c*96*96 + x*96 + y of an image is channel c
// at row y, column x. Labels 1..10 become 0..9. `input` is the folder holding the files or its parent
// holding stl10_binary/. Class names from class_names.txt when present. unlabeled_X.bin is not read.
RawDataset read_stl10(const std::string& input, std::int64_t limit = kNoLimit);

}  // namespace ft::prep
