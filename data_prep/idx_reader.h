// Reader for the MNIST / Fashion-MNIST IDX release: big-endian headers (magic 0x00000803 for the
// 28x28 image files, 0x00000801 for the label files), each file raw or gzip-compressed.
#pragma once

#include <cstdint>
#include <string>

#include "data_prep/raw_split.h"

namespace ft::prep {

// "fashion-mnist" when the input path mentions fashion, else "mnist".
std::string idx_default_name(const std::string& input);

// train-images-idx3-ubyte, train-labels-idx1-ubyte, t10k-images-idx3-ubyte, t10k-labels-idx1-ubyte,
// each with or without .gz, in `input`. Images come out 1-channel. Class names are Fashion-MNIST's when
// `dataset` contains "fashion", else the digits "0".."9".
RawDataset read_idx(const std::string& input, const std::string& dataset, std::int64_t limit = kNoLimit);

}  // namespace ft::prep
