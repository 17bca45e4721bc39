// libFuzzer target for JPEG/PNG decoding in the image-folder reader: the input becomes one image file in
// DIR/train/<class>/ and DIR/test/<class>/ (named .jpg or .png), read with and without resizing.
#include <fuzzer/FuzzedDataProvider.h>

#include <cstdint>
#include <string>

#include "data_prep/image_folder_reader.h"
#include "fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static ft::fuzz::Scratch scratch;
  FuzzedDataProvider in(data, size);
  const bool png_name = in.ConsumeBool();
  const int resize = in.ConsumeBool() ? 0 : in.ConsumeIntegralInRange(1, 16);
  const bool second_class = in.ConsumeBool();
  const std::string image = in.ConsumeRemainingBytesAsString();
  const std::string file = png_name ? "a.png" : "a.jpg";
  const auto& dir = scratch.fresh();
  ft::fuzz::only_ft_error([&] {
    for (const char* split : {"train", "test"}) {
      scratch.write(std::string(split) + "/cat/" + file, image);
      if (second_class) scratch.write(std::string(split) + "/dog/" + file, image);
    }
    ft::prep::read_image_folder(dir.string(), resize);
  });
  return 0;
}
