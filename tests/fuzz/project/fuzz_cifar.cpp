// libFuzzer target for the CIFAR-10/100 binary readers: the input is laid out as the release's files
// (optionally padded to whole records so label checks are reached) and only ft::Error may escape.
#include <fuzzer/FuzzedDataProvider.h>

#include <algorithm>
#include <cstdint>
#include <string>

#include "data_prep/cifar_reader.h"
#include "fuzz_support.h"

namespace {

constexpr std::size_t kPixels = 3 * 32 * 32;

// With `whole`, trims or zero-pads `bytes` to a whole number of records (at least one).
std::string records(std::string bytes, std::size_t record, bool whole) {
  if (whole) bytes.resize(std::max<std::size_t>(1, bytes.size() / record) * record, '\0');
  return bytes;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static ft::fuzz::Scratch scratch;
  FuzzedDataProvider in(data, size);
  const int variant = in.ConsumeIntegralInRange(0, 2);  // cifar10, cifar100 fine, cifar100 coarse
  const bool whole = in.ConsumeBool();
  const bool nested = in.ConsumeBool();  // files in <input>/cifar-10-batches-bin/ rather than <input>/
  const bool names = in.ConsumeBool();
  const std::int64_t limit = in.ConsumeBool() ? ft::prep::kNoLimit : in.ConsumeIntegralInRange(0, 4);
  const std::string class_names = names ? in.ConsumeRandomLengthString(512) : std::string();
  const std::string train = in.ConsumeRandomLengthString(1 << 16);
  const std::string test = in.ConsumeRemainingBytesAsString();

  const auto& dir = scratch.fresh();
  ft::fuzz::only_ft_error([&] {
    if (variant == 0) {
      const std::string sub = nested ? "cifar-10-batches-bin/" : "";
      for (int b = 1; b <= 5; ++b)
        scratch.write(sub + "data_batch_" + std::to_string(b) + ".bin", records(b == 1 ? train : test, 1 + kPixels, whole));
      scratch.write(sub + "test_batch.bin", records(test, 1 + kPixels, whole));
      if (names) scratch.write(sub + "batches.meta.txt", class_names);
      ft::prep::read_cifar10(dir.string(), limit);
    } else {
      const std::string sub = nested ? "cifar-100-binary/" : "";
      const bool fine = variant == 1;
      scratch.write(sub + "train.bin", records(train, 2 + kPixels, whole));
      scratch.write(sub + "test.bin", records(test, 2 + kPixels, whole));
      if (names) scratch.write(sub + (fine ? "fine_label_names.txt" : "coarse_label_names.txt"), class_names);
      ft::prep::read_cifar100(dir.string(), limit,
                              fine ? ft::prep::Cifar100Label::fine : ft::prep::Cifar100Label::coarse);
    }
  });
  return 0;
}
