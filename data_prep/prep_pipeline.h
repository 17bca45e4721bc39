// The whole conversion behind fusetrain-prep, callable without a command line: read and validate the
// raw release, transform, checksum, write the shard set. Nothing is written until all input is read.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "data_prep/cifar_reader.h"
#include "data_prep/raw_split.h"

namespace ft::prep {

enum class Format { cifar10, cifar100, stl10, idx, folder };

struct PrepOptions {
  Format format = Format::cifar10;
  std::string input, output;
  std::int64_t shards = 1;  // per split
  bool grayscale = false;
  int resize = 0;                 // > 0: resize to resize x resize
  std::int64_t limit = kNoLimit;  // first `limit` images of each split
  std::string name;               // dataset attribute; empty: default_dataset_name()
  Cifar100Label cifar100_label = Cifar100Label::fine;
  bool force = false;             // replace a shard set already in `output`
};

struct PrepSummary {
  std::string dataset;
  std::vector<std::string> class_names;
  std::int64_t train_count = 0, test_count = 0;
  int height = 0, width = 0, channels = 0;
  std::vector<double> mean, std;
  std::string source_sha256;
  std::vector<std::string> files;  // shards written, train first
  double seconds = 0;              // wall time of the whole conversion
};

// cifar10, cifar100, stl10, fashion-mnist or mnist (idx, by the input path), or the input folder's name.
std::string default_dataset_name(Format format, const std::string& input);

// Converts options.input into shards in options.output; throws ft::Error naming the file at fault.
PrepSummary run_prep(const PrepOptions& options);

}  // namespace ft::prep
