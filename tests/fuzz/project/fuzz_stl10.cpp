// libFuzzer target for the STL-10 binary reader: the input becomes train_X/_y and test_X/_y (optionally
// sized to whole images with one label byte each, so pixel and label checks are reached); only ft::Error may escape.
#include <fuzzer/FuzzedDataProvider.h>

#include <algorithm>
#include <cstdint>
#include <string>

#include "data_prep/stl10_reader.h"
#include "fuzz_support.h"

namespace {

constexpr std::size_t kImageBytes = 3 * 96 * 96;

// With `whole`, repeats/trims `seed` to `images` whole images (zeros when seed is empty).
std::string images_of(const std::string& seed, std::size_t images, bool whole) {
  if (!whole) return seed;
  std::string out(images * kImageBytes, '\0');
  for (std::size_t i = 0; i < out.size() && !seed.empty(); ++i) out[i] = seed[i % seed.size()];
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static ft::fuzz::Scratch scratch;
  FuzzedDataProvider in(data, size);
  const bool whole = in.ConsumeBool();
  const bool nested = in.ConsumeBool();
  const bool names = in.ConsumeBool();
  const std::int64_t limit = in.ConsumeBool() ? ft::prep::kNoLimit : in.ConsumeIntegralInRange(0, 3);
  const std::string class_names = names ? in.ConsumeRandomLengthString(512) : std::string();
  const std::string train_y = in.ConsumeRandomLengthString(8);
  const std::string test_y = in.ConsumeRandomLengthString(8);
  const std::string pixels = in.ConsumeRemainingBytesAsString();

  const auto& dir = scratch.fresh();
  const std::string sub = nested ? "stl10_binary/" : "";
  ft::fuzz::only_ft_error([&] {
    scratch.write(sub + "train_X.bin", images_of(pixels, train_y.size(), whole));
    scratch.write(sub + "train_y.bin", train_y);
    scratch.write(sub + "test_X.bin", images_of(pixels, test_y.size(), whole));
    scratch.write(sub + "test_y.bin", test_y);
    if (names) scratch.write(sub + "class_names.txt", class_names);
    ft::prep::read_stl10(dir.string(), limit);
  });
  return 0;
}
