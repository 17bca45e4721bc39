// JPEG and PNG decoding for the image-folder reader. A file that either library rejects, including a
// truncated JPEG that libjpeg would only warn about, is an error: a silently grey-filled image is worse.
// The header's dimensions are checked against a pixel cap before any pixel buffer is allocated, and
// buffer sizes are computed in 64 bits (a few hundred bytes can declare a 65000 x 65000 image).
#include "data_prep/image_codec.h"

#include <png.h>
#include <turbojpeg.h>

#include <cstring>

#include "runtime/error.h"

namespace ft::prep {
namespace {

// Throws naming the file unless width x height is a plausible image to decode into memory.
void check_dimensions(std::int64_t width, std::int64_t height, const std::string& path, const char* kind) {
  FT_REQUIRE(width > 0 && height > 0 && width <= kMaxImageSide && height <= kMaxImageSide &&
                 width * height <= kMaxImagePixels,
             path, ": ", kind, " header declares ", width, "x", height, " pixels, beyond the limit of ",
             kMaxImageSide, " per side and ", kMaxImagePixels, " pixels in all");
}

std::size_t rgb_bytes(std::int64_t width, std::int64_t height) {
  return static_cast<std::size_t>(static_cast<std::uint64_t>(width) * static_cast<std::uint64_t>(height) * 3);
}

bool starts_with(const std::vector<std::uint8_t>& bytes, const std::uint8_t* signature, std::size_t n) {
  return bytes.size() >= n && std::memcmp(bytes.data(), signature, n) == 0;
}

RgbImage decode_png(const std::vector<std::uint8_t>& bytes, const std::string& path) {
  png_image image;
  std::memset(&image, 0, sizeof(image));
  image.version = PNG_IMAGE_VERSION;
  FT_REQUIRE(png_image_begin_read_from_memory(&image, bytes.data(), bytes.size()) != 0, path,
             ": cannot decode PNG: ", image.message);
  const std::int64_t width = image.width, height = image.height;
  try {
    check_dimensions(width, height, path, "PNG");
  } catch (...) {
    png_image_free(&image);
    throw;
  }
  image.format = PNG_FORMAT_RGB;
  RgbImage out;
  out.height = static_cast<int>(height);
  out.width = static_cast<int>(width);
  out.pixels.assign(rgb_bytes(width, height), 0);  // not PNG_IMAGE_SIZE: that is 32-bit arithmetic
  FT_REQUIRE(png_image_finish_read(&image, nullptr, out.pixels.data(), 0, nullptr) != 0, path,
             ": cannot decode PNG: ", image.message);
  return out;
}

}  // namespace

ImageDecoder::ImageDecoder() : jpeg_(tjInitDecompress()) {
  FT_CHECK(jpeg_ != nullptr, "tjInitDecompress failed: ", tjGetErrorStr2(nullptr));
}

ImageDecoder::~ImageDecoder() { tjDestroy(jpeg_); }

RgbImage ImageDecoder::decode(const std::vector<std::uint8_t>& bytes, const std::string& path) {
  static const std::uint8_t kJpeg[] = {0xFF, 0xD8, 0xFF};
  static const std::uint8_t kPng[] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'};
  if (starts_with(bytes, kJpeg, sizeof(kJpeg))) return decode_jpeg(bytes, path);
  if (starts_with(bytes, kPng, sizeof(kPng))) return decode_png(bytes, path);
  throw Error(cat(path, ": cannot decode: neither a JPEG nor a PNG file (", bytes.size(), " bytes)"));
}

RgbImage ImageDecoder::decode_jpeg(const std::vector<std::uint8_t>& bytes, const std::string& path) {
  const auto size = static_cast<unsigned long>(bytes.size());
  int width = 0, height = 0, subsampling = 0, colorspace = 0;
  FT_REQUIRE(tjDecompressHeader3(jpeg_, bytes.data(), size, &width, &height, &subsampling, &colorspace) == 0,
             path, ": cannot decode JPEG header: ", tjGetErrorStr2(jpeg_));
  check_dimensions(width, height, path, "JPEG");
  RgbImage out;
  out.height = height;
  out.width = width;
  out.pixels.resize(rgb_bytes(width, height));
  const int rc = tjDecompress2(jpeg_, bytes.data(), size, out.pixels.data(), width, 0, height, TJPF_RGB, 0);
  FT_REQUIRE(rc == 0, path, ": cannot decode JPEG",
             tjGetErrorCode(jpeg_) == TJERR_WARNING ? " (corrupt data)" : "", ": ", tjGetErrorStr2(jpeg_));
  return out;
}

}  // namespace ft::prep
