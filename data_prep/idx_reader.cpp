// IDX files -> 1-channel NHWC images. zlib's gzread reads both gzip and plain files, so one path serves
// both; headers are checked for magic, shape and count before any pixel is read. Nothing is allocated
// from a header's word alone: a plain file's claim is checked against its size first, and a gzip
// stream is read in bounded chunks, growing the buffer only as data actually arrives.
#include "data_prep/idx_reader.h"

#include <zlib.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>
#include <memory>
#include <vector>

#include "data_prep/input_files.h"
#include "io/paths.h"
#include "runtime/error.h"

namespace ft::prep {
namespace {

constexpr std::uint32_t kImageMagic = 0x00000803, kLabelMagic = 0x00000801;
constexpr int kClasses = 10;
constexpr std::uint32_t kMaxSide = 16384;                 // rows and cols each
constexpr std::size_t kChunk = std::size_t{64} << 20;     // largest single growth of a gzip read
constexpr std::uint64_t kImageHeader = 16, kLabelHeader = 8;

// A gzip or plain file read through zlib, closed on scope exit.
class GzReader {
 public:
  explicit GzReader(std::string path) : path_(std::move(path)), file_(gzopen(path_.c_str(), "rb")) {
    FT_REQUIRE(file_ != nullptr, path_, ": cannot open: ", std::strerror(errno));
  }
  ~GzReader() { gzclose(file_); }
  GzReader(const GzReader&) = delete;
  GzReader& operator=(const GzReader&) = delete;

  // Fills out[0, size) or throws naming the file and `what` was being read.
  void read(std::uint8_t* out, std::size_t size, const char* what) {
    std::size_t done = 0;
    while (done < size) {
      const auto want = static_cast<unsigned>(std::min<std::size_t>(size - done, INT_MAX));
      const int got = gzread(file_, out + done, want);
      if (got < 0) {
        int code = 0;
        throw Error(cat(path_, ": cannot read ", what, ": ", gzerror(file_, &code)));
      }
      FT_REQUIRE(got > 0, path_, ": truncated: the file ends after ", done, " of the ", size, " bytes of ",
                 what);
      done += static_cast<std::size_t>(got);
    }
  }

  // Reads `size` bytes into `out` (replacing its contents) without trusting `size`: a plain file must
  // hold `header + size` bytes (else the error is `short_file(file_size)`), and a gzip stream is read
  // in chunks of at most kChunk, so a lying header costs at most one chunk beyond the real data.
  template <typename ShortFile>
  void read_claimed(std::vector<std::uint8_t>& out, std::uint64_t header, std::uint64_t size,
                    const char* what, ShortFile&& short_file) {
    out.clear();
    if (gzdirect(file_)) {
      const std::uint64_t file_size = paths::file_size(path_);
      if (file_size < header || file_size - header < size) throw Error(short_file(file_size));
      out.resize(static_cast<std::size_t>(size));
      read(out.data(), out.size(), what);
      return;
    }
    std::uint64_t done = 0;
    while (done < size) {
      const auto step = static_cast<std::size_t>(std::min<std::uint64_t>(size - done, kChunk));
      out.resize(static_cast<std::size_t>(done) + step);
      std::size_t got = 0;
      while (got < step) {
        const auto want = static_cast<unsigned>(std::min<std::size_t>(step - got, INT_MAX));
        const int n = gzread(file_, out.data() + done + got, want);
        if (n < 0) {
          int code = 0;
          throw Error(cat(path_, ": cannot read ", what, ": ", gzerror(file_, &code)));
        }
        FT_REQUIRE(n > 0, path_, ": truncated: the file ends after ", done + got, " of the ", size,
                   " bytes of ", what);
        got += static_cast<std::size_t>(n);
      }
      done += step;
    }
  }

  std::uint32_t read_u32(const char* what) {
    std::uint8_t b[4];
    read(b, 4, what);
    return (std::uint32_t{b[0]} << 24) | (std::uint32_t{b[1]} << 16) | (std::uint32_t{b[2]} << 8) | b[3];
  }

  void expect_magic(std::uint32_t expected, const char* kind) {
    const std::uint32_t magic = read_u32("the header");
    FT_REQUIRE(magic == expected, path_, ": IDX magic number is 0x", hex(magic), " but an ", kind,
               " file starts with 0x", hex(expected));
  }

 private:
  static std::string hex(std::uint32_t v) {
    char text[9];
    std::snprintf(text, sizeof(text), "%08X", v);
    return text;
  }
  std::string path_;
  gzFile file_;
};

// `dir/base`, or `dir/base.gz` when only that exists.
std::string locate(const std::string& dir, const std::string& base) {
  const std::string raw = paths::join(dir, base), gz = raw + ".gz";
  if (paths::is_regular_file(raw)) return raw;
  require_file(gz, "expected " + base + " or " + base + ".gz, as in the MNIST / Fashion-MNIST IDX release");
  return gz;
}

RawSplit read_split(const std::string& images_path, const std::string& labels_path, std::int64_t limit,
                    std::vector<std::string>& sources) {
  GzReader images(images_path), labels(labels_path);
  images.expect_magic(kImageMagic, "IDX image (unsigned byte, 3 dimensions)");
  const std::uint32_t count = images.read_u32("the header");
  const std::uint32_t rows = images.read_u32("the header"), cols = images.read_u32("the header");
  FT_REQUIRE(rows > 0 && cols > 0 && rows <= kMaxSide && cols <= kMaxSide, images_path, ": image size ", rows,
             "x", cols, " in the header is not plausible (each side must be 1..", kMaxSide, ")");
  labels.expect_magic(kLabelMagic, "IDX label (unsigned byte, 1 dimension)");
  const std::uint32_t label_count = labels.read_u32("the header");
  FT_REQUIRE(label_count == count, labels_path, ": holds ", label_count, " labels but ", images_path,
             " holds ", count, " images");

  // All in 64 bits: count < 2^32 and rows * cols <= 2^28, so no product overflows.
  const std::int64_t n = std::min<std::int64_t>(count, limit);
  const std::uint64_t image_bytes = std::uint64_t{rows} * cols;
  const std::uint64_t pixel_bytes = static_cast<std::uint64_t>(n) * image_bytes;
  RawSplit split;
  split.reset(static_cast<int>(rows), static_cast<int>(cols), 1, 0);  // grown by the reads below
  images.read_claimed(split.images, kImageHeader, pixel_bytes, "pixels", [&](std::uint64_t file_size) {
    const std::uint64_t need = kImageHeader + pixel_bytes;
    if (n == static_cast<std::int64_t>(count))
      return cat(images_path, ": header claims ", count, " images of ", rows, "x", cols, " (", need,
                 " bytes with the header) but the file holds only ", file_size, " bytes");
    return cat(images_path, ": header claims ", count, " images of ", rows, "x", cols, "; the first ", n,
               " need ", need, " bytes with the header but the file holds only ", file_size, " bytes");
  });
  std::vector<std::uint8_t> raw_labels;
  labels.read_claimed(raw_labels, kLabelHeader, static_cast<std::uint64_t>(n), "labels",
                      [&](std::uint64_t file_size) {
                        return cat(labels_path, ": header claims ", count, " labels (", kLabelHeader + n,
                                   " bytes with the header needed) but the file holds only ", file_size,
                                   " bytes");
                      });
  split.labels.reserve(raw_labels.size());
  for (std::size_t i = 0; i < raw_labels.size(); ++i) {
    FT_REQUIRE(raw_labels[i] < kClasses, labels_path, ": label ", int{raw_labels[i]}, " of image ", i,
               " is outside 0..", kClasses - 1);
    split.labels.push_back(raw_labels[i]);
  }
  sources.push_back(images_path);
  sources.push_back(labels_path);
  return split;
}

bool mentions_fashion(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(), [](unsigned char ch) { return std::tolower(ch); });
  return text.find("fashion") != std::string::npos;
}

}  // namespace

std::string idx_default_name(const std::string& input) {
  return mentions_fashion(paths::absolute(input)) ? "fashion-mnist" : "mnist";
}

RawDataset read_idx(const std::string& input, const std::string& dataset, std::int64_t limit) {
  require_directory(input);
  const std::string& dir = input;
  RawDataset ds;
  if (mentions_fashion(dataset)) {
    ds.class_names = {"T-shirt/top", "Trouser", "Pullover", "Dress", "Coat",
                      "Sandal",      "Shirt",   "Sneaker",  "Bag",   "Ankle boot"};
  } else {
    for (int d = 0; d < kClasses; ++d) ds.class_names.push_back(std::to_string(d));
  }
  const std::string train_images = locate(dir, "train-images-idx3-ubyte");
  const std::string train_labels = locate(dir, "train-labels-idx1-ubyte");
  const std::string test_images = locate(dir, "t10k-images-idx3-ubyte");
  const std::string test_labels = locate(dir, "t10k-labels-idx1-ubyte");
  ds.train = read_split(train_images, train_labels, limit, ds.source_files);
  ds.test = read_split(test_images, test_labels, limit, ds.source_files);
  return ds;
}

}  // namespace ft::prep
