// Loading and resizing of the study's images with ATen (the same bilinear resize on any host) and PNG
// output through libpng's simplified API.
#include "app/bench_gray_images.h"

#include <ATen/ATen.h>
#include <png.h>

#include <algorithm>

#include "io/atomic_file.h"
#include "runtime/error.h"
#include "shard/shard_reader.h"

namespace ft {

std::vector<std::uint8_t> load_rgb_images(const std::string& dir, const std::string& split, std::int64_t count,
                                          int size, std::int64_t* loaded) {
  const ShardReader reader(dir, split);
  const std::int64_t n = std::min(count, reader.total());
  FT_REQUIRE(n > 0, dir, ": the ", split, " split holds no images");
  const HostSplit host = reader.read(0, n);
  const ShardMeta& m = host.meta;
  FT_REQUIRE(m.channels == 1 || m.channels == 3, dir, ": images have ", m.channels, " channels; 1 or 3 expected");
  auto x = at::from_blob(const_cast<std::uint8_t*>(host.images.data()), {n, m.height, m.width, m.channels}, at::kByte)
               .permute({0, 3, 1, 2})
               .to(at::kFloat);
  if (m.channels == 1) x = x.expand({n, 3, m.height, m.width});
  x = at::upsample_bilinear2d(x, {size, size}, /*align_corners=*/false);
  const auto rgb = x.round().clamp(0, 255).to(at::kByte).permute({0, 2, 3, 1}).contiguous();
  *loaded = n;
  return std::vector<std::uint8_t>(rgb.data_ptr<std::uint8_t>(), rgb.data_ptr<std::uint8_t>() + rgb.numel());
}

void write_png(const std::string& path, const std::uint8_t* pixels, int width, int height, int channels) {
  png_image image{};
  image.version = PNG_IMAGE_VERSION;
  image.width = static_cast<png_uint_32>(width);
  image.height = static_cast<png_uint_32>(height);
  image.format = channels == 3 ? PNG_FORMAT_RGB : PNG_FORMAT_GRAY;
  png_alloc_size_t bytes = 0;
  FT_REQUIRE(png_image_write_to_memory(&image, nullptr, &bytes, 0, pixels, 0, nullptr) != 0, path,
             ": cannot encode PNG: ", image.message);
  std::string buffer(bytes, '\0');
  FT_REQUIRE(png_image_write_to_memory(&image, buffer.data(), &bytes, 0, pixels, 0, nullptr) != 0, path,
             ": cannot encode PNG: ", image.message);
  buffer.resize(bytes);
  write_file_atomically(path, buffer);
}

}  // namespace ft
