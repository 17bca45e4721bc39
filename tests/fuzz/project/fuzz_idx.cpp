// libFuzzer target for the MNIST / Fashion-MNIST IDX reader: the input becomes the four IDX files, raw or
// gzip-compressed, with fuzzed headers and bodies; only ft::Error may escape.
#include <fuzzer/FuzzedDataProvider.h>
#include <zlib.h>

#include <cstdint>
#include <string>

#include "data_prep/idx_reader.h"
#include "fuzz_support.h"

namespace {

std::string gzip(const std::string& raw) {
  uLongf size = compressBound(static_cast<uLong>(raw.size())) + 32;
  std::string out(size, '\0');
  z_stream z{};
  deflateInit2(&z, 1, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY);  // +16: gzip wrapper
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(raw.data()));
  z.avail_in = static_cast<uInt>(raw.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  deflate(&z, Z_FINISH);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

std::string big_endian(std::uint32_t v) {
  return {static_cast<char>(v >> 24), static_cast<char>(v >> 16), static_cast<char>(v >> 8), static_cast<char>(v)};
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static ft::fuzz::Scratch scratch;
  FuzzedDataProvider in(data, size);
  const int compressed = in.ConsumeIntegralInRange(0, 15);  // bit f: file f written as .gz
  const bool magic = in.ConsumeBool();  // prepend the right magic numbers so the shape checks are reached
  const bool fashion = in.ConsumeBool();
  const std::int64_t limit = in.ConsumeBool() ? ft::prep::kNoLimit : in.ConsumeIntegralInRange(0, 4);
  std::string files[4];
  for (auto& f : files) f = in.ConsumeRandomLengthString(4096);
  files[3] += in.ConsumeRemainingBytesAsString();
  const char* const names[4] = {"train-images-idx3-ubyte", "train-labels-idx1-ubyte", "t10k-images-idx3-ubyte",
                                "t10k-labels-idx1-ubyte"};
  const auto& dir = scratch.fresh();
  ft::fuzz::only_ft_error([&] {
    for (int f = 0; f < 4; ++f) {
      const std::string body = (magic ? big_endian(f % 2 == 0 ? 0x803 : 0x801) : std::string()) + files[f];
      const bool gz = compressed & (1 << f);
      scratch.write(std::string(names[f]) + (gz ? ".gz" : ""), gz ? gzip(body) : body);
    }
    ft::prep::read_idx(dir.string(), fashion ? "fashion-mnist" : "mnist", limit);
  });
  return 0;
}
