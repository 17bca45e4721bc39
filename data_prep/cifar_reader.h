// Readers for the CIFAR-10 and CIFAR-100 binary releases (cifar-10-batches-bin, cifar-100-binary):
// fixed-size records of label byte(s) followed by a 32x32 RGB image stored channel-major.
#pragma once

#include <cstdint>
#include <string>

#include "data_prep/raw_split.h"

namespace ft::prep {

// data_batch_1..5.bin (train) and test_batch.bin (test), each record 1 label byte + 3072 pixel bytes
// (1024 R, 1024 G, 1024 B, each row-major 32x32). `input` is the folder holding them or its parent
// holding cifar-10-batches-bin/. Class names from batches.meta.txt when present.
RawDataset read_cifar10(const std::string& input, std::int64_t limit = kNoLimit);

// Which of CIFAR-100's two labels becomes the label: 100 fine classes or 20 coarse superclasses.
enum class Cifar100Label { fine, coarse };

// train.bin and test.bin, each record coarse label byte, fine label byte, 3072 pixel bytes. `input` is
// the folder holding them or its parent holding cifar-100-binary/. Class names from
// fine_label_names.txt (coarse_label_names.txt) when present, else class_0.. (coarse_0..).
RawDataset read_cifar100(const std::string& input, std::int64_t limit = kNoLimit,
                         Cifar100Label label = Cifar100Label::fine);

}  // namespace ft::prep
