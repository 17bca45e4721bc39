// Decoding of the image files found in image-folder data sets: JPEG through libjpeg-turbo's TurboJPEG
// API and PNG through libpng's simplified API, both to 8-bit interleaved RGB.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace ft::prep {

// Largest image decode() accepts, checked against the file's header before any pixel is allocated.
constexpr std::int64_t kMaxImageSide = 32768;
constexpr std::int64_t kMaxImagePixels = std::int64_t{1} << 26;  // 64 Mpx, 192 MiB as RGB

struct RgbImage {
  int height = 0, width = 0;
  std::vector<std::uint8_t> pixels;  // height * width * 3, row-major RGB
};

// Holds one TurboJPEG decompressor, reused across files; not thread-safe.
class ImageDecoder {
 public:
  ImageDecoder();
  ~ImageDecoder();
  ImageDecoder(const ImageDecoder&) = delete;
  ImageDecoder& operator=(const ImageDecoder&) = delete;

  // Decodes a JPEG or PNG, told apart by their signatures (not by the file name). Gray inputs are
  // replicated to RGB; PNG alpha is composited onto black. Errors name `path` and the decoder's reason;
  // images over kMaxImageSide per side or kMaxImagePixels in all are refused from their header.
  RgbImage decode(const std::vector<std::uint8_t>& bytes, const std::string& path);

 private:
  RgbImage decode_jpeg(const std::vector<std::uint8_t>& bytes, const std::string& path);
  void* jpeg_;  // tjhandle
};

}  // namespace ft::prep
