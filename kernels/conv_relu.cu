// CUDA direct convolution with bias and ReLU fused into the epilogue (the coursework's hand-written
// kernel), and its host launcher, which sizes tiles to fit shared memory for any kernel, stride and padding.
#include <algorithm>
#include <cstdint>

#include "kernels/conv_relu.h"
#include "kernels/cuda_check.h"

namespace ft {

// ----------------------------------------------------------------------------------------------------
// kernels

namespace {

constexpr int kOutChannelsPerBlock = 8;
constexpr int kMaxChannelsPerStep = 8;
constexpr int kSharedFloats = 48 * 1024 / sizeof(float);  // the default dynamic shared-memory limit

// Floats in one input channel's patch under a tile x tile block of outputs.
FT_HOST_DEVICE inline int patch_floats(const ConvGeometry& g, int tile) {
  return ((tile - 1) * g.stride_h + g.kernel_h) * ((tile - 1) * g.stride_w + g.kernel_w);
}

// Shared memory one input channel takes: its patch plus its weights for the block's output channels.
int floats_per_channel(const ConvGeometry& g, int tile) {
  return patch_floats(g, tile) + kOutChannelsPerBlock * g.kernel_h * g.kernel_w;
}

}  // namespace

// A block computes a tile x tile patch of output pixels for kOutChannelsPerBlock output channels of one
// image: it stages the input patch and the weights of a few input channels at a time in shared memory,
// accumulates in registers, then adds the bias, applies ReLU and writes each output once.
// Grid: x = output tiles of one image, y = groups of kOutChannelsPerBlock output channels, z strides
// over the batch. Block: tile x tile threads, one output pixel each.
__global__ void conv_bias_relu_forward_kernel(const float* __restrict__ x, const float* __restrict__ w,
                                              const float* __restrict__ b, float* __restrict__ y, ConvGeometry g,
                                              int out_h, int out_w, int tile, int tiles_w, int channels_per_step) {
  extern __shared__ float shared[];
  const int patch_w = (tile - 1) * g.stride_w + g.kernel_w;
  const int patch = patch_floats(g, tile);
  const int taps = g.kernel_h * g.kernel_w;
  float* s_in = shared;                              // [channels_per_step][patch_h][patch_w]
  float* s_w = shared + channels_per_step * patch;   // [kOutChannelsPerBlock][channels in this step][taps]

  const int tid = threadIdx.y * tile + threadIdx.x;
  const int threads = tile * tile;
  const int oy0 = (blockIdx.x / tiles_w) * tile, ox0 = (blockIdx.x % tiles_w) * tile;
  const int oy = oy0 + threadIdx.y, ox = ox0 + threadIdx.x;
  const int iy0 = oy0 * g.stride_h - g.pad_h, ix0 = ox0 * g.stride_w - g.pad_w;
  const int oc0 = blockIdx.y * kOutChannelsPerBlock;
  const bool inside = oy < out_h && ox < out_w;

  for (int n = blockIdx.z; n < g.batch; n += gridDim.z) {
    float acc[kOutChannelsPerBlock];
#pragma unroll
    for (int o = 0; o < kOutChannelsPerBlock; ++o) acc[o] = 0.f;

    for (int c0 = 0; c0 < g.in_channels; c0 += channels_per_step) {
      const int step = min(channels_per_step, g.in_channels - c0);
      const float* x_c0 = x + (static_cast<std::int64_t>(n) * g.in_channels + c0) * g.height * g.width;
      for (int i = tid; i < step * patch; i += threads) {
        const int c = i / patch, r = i % patch;
        const int iy = iy0 + r / patch_w, ix = ix0 + r % patch_w;
        const bool in_image = iy >= 0 && iy < g.height && ix >= 0 && ix < g.width;
        s_in[i] = in_image ? x_c0[(static_cast<std::int64_t>(c) * g.height + iy) * g.width + ix] : 0.f;
      }
      for (int i = tid; i < kOutChannelsPerBlock * step * taps; i += threads) {
        const int o = i / (step * taps), r = i % (step * taps);
        const int oc = oc0 + o;
        s_w[i] = oc < g.out_channels ? w[(static_cast<std::int64_t>(oc) * g.in_channels + c0) * taps + r] : 0.f;
      }
      __syncthreads();

      if (inside) {
        for (int c = 0; c < step; ++c)
          for (int ky = 0; ky < g.kernel_h; ++ky) {
            const float* in_row =
                s_in + c * patch + (threadIdx.y * g.stride_h + ky) * patch_w + threadIdx.x * g.stride_w;
            const float* w_row = s_w + c * taps + ky * g.kernel_w;
            for (int kx = 0; kx < g.kernel_w; ++kx) {
              const float v = in_row[kx];
#pragma unroll
              for (int o = 0; o < kOutChannelsPerBlock; ++o) acc[o] += v * w_row[o * step * taps + kx];
            }
          }
      }
      __syncthreads();
    }

    if (inside) {
#pragma unroll
      for (int o = 0; o < kOutChannelsPerBlock; ++o) {
        const int oc = oc0 + o;
        if (oc >= g.out_channels) break;
        const float v = acc[o] + (b ? b[oc] : 0.f);
        y[((static_cast<std::int64_t>(n) * g.out_channels + oc) * out_h + oy) * out_w + ox] = v < 0.f ? 0.f : v;
      }
    }
  }
}

// ----------------------------------------------------------------------------------------------------
// launchers

void conv_bias_relu_device(const float* d_x, const float* d_w, const float* d_b, float* d_y, const ConvGeometry& g,
                           cudaStream_t stream) {
  check_conv_geometry(g);
  const int out_h = conv_out_height(g), out_w = conv_out_width(g);

  int tile = std::max(out_h, out_w) <= 8 ? 8 : 16;
  while (tile > 1 && floats_per_channel(g, tile) > kSharedFloats) tile /= 2;
  FT_REQUIRE(floats_per_channel(g, tile) <= kSharedFloats, "conv+ReLU kernel: a ", g.kernel_h, "x", g.kernel_w,
             " kernel does not fit in shared memory");
  const int channels_per_step =
      std::min({g.in_channels, kMaxChannelsPerStep, kSharedFloats / floats_per_channel(g, tile)});

  const int tiles_h = ceil_div(out_h, tile), tiles_w = ceil_div(out_w, tile);
  const std::int64_t tiles = static_cast<std::int64_t>(tiles_h) * tiles_w;
  const int channel_groups = ceil_div(g.out_channels, kOutChannelsPerBlock);
  FT_REQUIRE(tiles <= kMaxGridX && channel_groups <= kMaxGridYZ, "conv+ReLU kernel: output of ", out_h, "x", out_w,
             "x", g.out_channels, " exceeds the launch grid");
  const dim3 grid(static_cast<unsigned>(tiles), channel_groups, std::min<int>(g.batch, kMaxGridYZ));
  const dim3 block(tile, tile);
  const std::size_t shared_bytes = sizeof(float) * channels_per_step * floats_per_channel(g, tile);
  conv_bias_relu_forward_kernel<<<grid, block, shared_bytes, stream>>>(d_x, d_w, d_b, d_y, g, out_h, out_w, tile,
                                                                       tiles_w, channels_per_step);
  FT_CHECK_LAUNCH();
}

}  // namespace ft
