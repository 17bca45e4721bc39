// Separable resampling and grayscale conversion of whole splits. Weights are computed once per axis as
// (source index, weight) taps, so the same code does bilinear enlargement and area-averaged shrinking.
#include "data_prep/transforms.h"

#include <algorithm>
#include <cmath>

#include "kernels/rgb_to_gray.h"
#include "runtime/error.h"

namespace ft::prep {
namespace {

struct Tap {
  int index;
  double weight;
};

// For each of `out` positions along an axis of length `in`: the source positions and their weights.
std::vector<std::vector<Tap>> axis_taps(int in, int out) {
  std::vector<std::vector<Tap>> taps(static_cast<std::size_t>(out));
  const double scale = static_cast<double>(in) / out;
  for (int o = 0; o < out; ++o) {
    auto& t = taps[static_cast<std::size_t>(o)];
    if (in > out) {
      const double lo = o * scale, hi = lo + scale;
      for (int i = static_cast<int>(lo); i < in && i < hi; ++i) {
        const double overlap = std::min(hi, i + 1.0) - std::max(lo, static_cast<double>(i));
        if (overlap > 0) t.push_back({i, overlap / scale});
      }
    } else {
      const double src = std::clamp((o + 0.5) * scale - 0.5, 0.0, in - 1.0);
      const int i0 = static_cast<int>(src);
      const double frac = src - i0;
      t.push_back({i0, 1.0 - frac});
      if (frac > 0) t.push_back({i0 + 1, frac});
    }
  }
  return taps;
}

}  // namespace

std::vector<std::uint8_t> resize_image(const std::uint8_t* image, int height, int width, int channels,
                                       int out_height, int out_width) {
  FT_CHECK(height > 0 && width > 0 && channels > 0 && out_height > 0 && out_width > 0, "cannot resize ",
           height, "x", width, "x", channels, " to ", out_height, "x", out_width);
  const auto x_taps = axis_taps(width, out_width), y_taps = axis_taps(height, out_height);
  const std::size_t c = static_cast<std::size_t>(channels);
  // Horizontal pass into doubles (height x out_width), then vertical pass with rounding.
  std::vector<double> rows(static_cast<std::size_t>(height) * out_width * c, 0.0);
  for (int y = 0; y < height; ++y) {
    const std::uint8_t* in_row = image + static_cast<std::size_t>(y) * width * c;
    double* out_row = rows.data() + static_cast<std::size_t>(y) * out_width * c;
    for (int x = 0; x < out_width; ++x)
      for (const Tap& tap : x_taps[static_cast<std::size_t>(x)])
        for (std::size_t k = 0; k < c; ++k) out_row[x * c + k] += tap.weight * in_row[tap.index * c + k];
  }
  std::vector<std::uint8_t> out(static_cast<std::size_t>(out_height) * out_width * c);
  std::vector<double> acc(static_cast<std::size_t>(out_width) * c);
  for (int y = 0; y < out_height; ++y) {
    std::fill(acc.begin(), acc.end(), 0.0);
    for (const Tap& tap : y_taps[static_cast<std::size_t>(y)]) {
      const double* row = rows.data() + static_cast<std::size_t>(tap.index) * out_width * c;
      for (std::size_t i = 0; i < acc.size(); ++i) acc[i] += tap.weight * row[i];
    }
    std::uint8_t* out_row = out.data() + static_cast<std::size_t>(y) * out_width * c;
    for (std::size_t i = 0; i < acc.size(); ++i)
      out_row[i] = static_cast<std::uint8_t>(std::clamp(std::lround(acc[i]), 0L, 255L));
  }
  return out;
}

void resize_split(RawSplit& split, int size) {
  if (split.height == size && split.width == size) return;
  const std::size_t in_bytes = split.image_bytes();
  const std::size_t out_bytes = static_cast<std::size_t>(size) * size * split.channels;
  std::vector<std::uint8_t> resized(static_cast<std::size_t>(split.count()) * out_bytes);
  for (std::int64_t i = 0; i < split.count(); ++i) {
    const auto image = resize_image(split.images.data() + i * in_bytes, split.height, split.width,
                                    split.channels, size, size);
    std::copy(image.begin(), image.end(), resized.begin() + i * static_cast<std::ptrdiff_t>(out_bytes));
  }
  split.images = std::move(resized);
  split.height = split.width = size;
}

void grayscale_split(RawSplit& split) {
  if (split.channels == 1) return;
  FT_CHECK(split.channels == 3, "grayscale needs 1 or 3 channels, not ", split.channels);
  const std::size_t pixels = split.images.size() / 3;
  std::vector<std::uint8_t> gray(pixels);
  if (cuda_kernels_available())
    rgb_to_gray_staged(split.images.data(), gray.data(), pixels);
  else
    rgb_to_gray_cpu(split.images.data(), gray.data(), pixels);
  split.images = std::move(gray);
  split.channels = 1;
}

}  // namespace ft::prep
