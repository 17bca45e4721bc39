// CIFAR-10/100 binary records -> NHWC images. Both releases share one record layout apart from the
// number of leading label bytes, so one record parser serves both; sizes and labels are checked per file.
#include "data_prep/cifar_reader.h"

#include <algorithm>
#include <vector>

#include "data_prep/input_files.h"
#include "io/paths.h"
#include "runtime/error.h"

namespace ft::prep {
namespace {

constexpr int kCifarSide = 32, kCifarPlane = kCifarSide * kCifarSide, kCifarPixels = 3 * kCifarPlane;

struct RecordLayout {
  int label_bytes;   // 1 for CIFAR-10, 2 for CIFAR-100
  int label_offset;  // which of them is the label
  int classes;
  int record_bytes() const { return label_bytes + kCifarPixels; }
};

// Appends the records of `path` to `split` until it holds `limit` images.
void append_records(const std::string& path, const RecordLayout& layout, std::int64_t limit, RawSplit& split,
                    std::vector<std::string>& sources) {
  const auto size = file_size(path);
  const auto record = static_cast<std::uint64_t>(layout.record_bytes());
  FT_REQUIRE(size > 0, path, ": file is empty");
  FT_REQUIRE(size % record == 0, path, ": size ", size, " bytes is not a multiple of the ", record,
             "-byte record (", layout.label_bytes, " label byte(s) + ", kCifarPixels,
             " pixel bytes): the last record is truncated");
  if (split.count() >= limit) return;
  const std::vector<std::uint8_t> bytes = read_bytes(path);
  sources.push_back(path);
  const auto records = static_cast<std::int64_t>(size / record);
  for (std::int64_t r = 0; r < records && split.count() < limit; ++r) {
    const std::uint8_t* rec = bytes.data() + r * layout.record_bytes();
    const int label = rec[layout.label_offset];
    FT_REQUIRE(label < layout.classes, path, ": record ", r, " has label ", label, ", outside 0..",
               layout.classes - 1);
    split.labels.push_back(label);
    const std::uint8_t* planes = rec + layout.label_bytes;
    const std::size_t at = split.images.size();
    split.images.resize(at + kCifarPixels);
    std::uint8_t* out = split.images.data() + at;
    for (int p = 0; p < kCifarPlane; ++p)
      for (int c = 0; c < 3; ++c) out[3 * p + c] = planes[c * kCifarPlane + p];
  }
}

RawSplit read_cifar_split(const std::vector<std::string>& paths, const RecordLayout& layout, std::int64_t limit,
                    std::vector<std::string>& sources) {
  RawSplit split;
  std::int64_t records = 0;
  for (const auto& path : paths)
    records += static_cast<std::int64_t>(file_size(path) / layout.record_bytes());
  split.reset(kCifarSide, kCifarSide, 3, std::min(records, limit));
  for (const auto& path : paths) append_records(path, layout, limit, split, sources);
  return split;
}

std::vector<std::string> numbered_names(const std::string& prefix, int count) {
  std::vector<std::string> names;
  for (int i = 0; i < count; ++i) names.push_back(prefix + std::to_string(i));
  return names;
}

}  // namespace

RawDataset read_cifar10(const std::string& input, std::int64_t limit) {
  const std::string dir = release_dir(input, "cifar-10-batches-bin");
  const std::string expected =
      "the CIFAR-10 binary release has data_batch_1.bin .. data_batch_5.bin and test_batch.bin";
  std::vector<std::string> train_files;
  for (int b = 1; b <= 5; ++b)
    train_files.push_back(paths::join(dir, "data_batch_" + std::to_string(b) + ".bin"));
  const std::string test_file = paths::join(dir, "test_batch.bin");
  for (const auto& path : train_files) require_file(path, expected);
  require_file(test_file, expected);

  RawDataset ds;
  ds.class_names = class_names_or(
      paths::join(dir, "batches.meta.txt"),
      {"airplane", "automobile", "bird", "cat", "deer", "dog", "frog", "horse", "ship", "truck"},
      ds.source_files);
  const RecordLayout layout{1, 0, 10};
  ds.train = read_cifar_split(train_files, layout, limit, ds.source_files);
  ds.test = read_cifar_split({test_file}, layout, limit, ds.source_files);
  return ds;
}

RawDataset read_cifar100(const std::string& input, std::int64_t limit, Cifar100Label label) {
  const std::string dir = release_dir(input, "cifar-100-binary");
  const std::string expected = "the CIFAR-100 binary release has train.bin and test.bin";
  const std::string train_file = paths::join(dir, "train.bin"), test_file = paths::join(dir, "test.bin");
  require_file(train_file, expected);
  require_file(test_file, expected);

  RawDataset ds;
  const bool fine = label == Cifar100Label::fine;
  const int classes = fine ? 100 : 20;
  const auto names_file = paths::join(dir, fine ? "fine_label_names.txt" : "coarse_label_names.txt");
  ds.class_names = class_names_or(names_file, numbered_names(fine ? "class_" : "coarse_", classes),
                                  ds.source_files);
  const RecordLayout layout{2, fine ? 1 : 0, classes};
  ds.train = read_cifar_split({train_file}, layout, limit, ds.source_files);
  ds.test = read_cifar_split({test_file}, layout, limit, ds.source_files);
  return ds;
}

}  // namespace ft::prep
