// Shape arithmetic and the CPU reference of the fused conv+bias+ReLU. The reference is deliberately
// naive: it is the specification the kernel is tested against.
#include "kernels/conv_relu.h"

#include <cstdint>

#include "runtime/error.h"

namespace ft {

int conv_out_height(const ConvGeometry& g) { return (g.height + 2 * g.pad_h - g.kernel_h) / g.stride_h + 1; }

int conv_out_width(const ConvGeometry& g) { return (g.width + 2 * g.pad_w - g.kernel_w) / g.stride_w + 1; }

void check_conv_geometry(const ConvGeometry& g) {
  FT_REQUIRE(g.batch > 0 && g.in_channels > 0 && g.height > 0 && g.width > 0 && g.out_channels > 0,
             "conv+ReLU: input and output sizes must be positive (batch ", g.batch, ", channels ", g.in_channels,
             "->", g.out_channels, ", ", g.height, "x", g.width, ")");
  FT_REQUIRE(g.kernel_h > 0 && g.kernel_w > 0 && g.stride_h > 0 && g.stride_w > 0 && g.pad_h >= 0 && g.pad_w >= 0,
             "conv+ReLU: kernel and stride must be positive and padding non-negative");
  FT_REQUIRE(g.height + 2 * g.pad_h >= g.kernel_h && g.width + 2 * g.pad_w >= g.kernel_w,
             "conv+ReLU: a ", g.kernel_h, "x", g.kernel_w, " kernel does not fit a ", g.height, "x", g.width,
             " input padded by ", g.pad_h, "x", g.pad_w);
}

template <typename T>
void conv_bias_relu_cpu(const T* x, const T* w, const T* b, T* y, const ConvGeometry& g) {
  check_conv_geometry(g);
  const int out_h = conv_out_height(g), out_w = conv_out_width(g);
  for (int n = 0; n < g.batch; ++n)
    for (int oc = 0; oc < g.out_channels; ++oc)
      for (int oy = 0; oy < out_h; ++oy)
        for (int ox = 0; ox < out_w; ++ox) {
          T sum = b ? b[oc] : T(0);
          for (int c = 0; c < g.in_channels; ++c)
            for (int ky = 0; ky < g.kernel_h; ++ky) {
              const int iy = oy * g.stride_h - g.pad_h + ky;
              if (iy < 0 || iy >= g.height) continue;
              for (int kx = 0; kx < g.kernel_w; ++kx) {
                const int ix = ox * g.stride_w - g.pad_w + kx;
                if (ix < 0 || ix >= g.width) continue;
                const std::int64_t xi = ((std::int64_t(n) * g.in_channels + c) * g.height + iy) * g.width + ix;
                const std::int64_t wi = ((std::int64_t(oc) * g.in_channels + c) * g.kernel_h + ky) * g.kernel_w + kx;
                sum += x[xi] * w[wi];
              }
            }
          y[((std::int64_t(n) * g.out_channels + oc) * out_h + oy) * out_w + ox] = sum < T(0) ? T(0) : sum;
        }
}

template void conv_bias_relu_cpu<float>(const float*, const float*, const float*, float*, const ConvGeometry&);
template void conv_bias_relu_cpu<double>(const double*, const double*, const double*, double*,
                                         const ConvGeometry&);

}  // namespace ft
