// CUDA max-pool -> BatchNorm -> GELU forward and backward, fp32/fp16/bf16 maps, NHWC or NCHW: per-block channel
// sums into a workspace (deterministic, no atomics), a warp per channel to finish them, then one element-wise pass.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <cstdint>

#include "kernels/cuda_check.h"
#include "kernels/pool_norm_gelu.h"
#include "kernels/pool_norm_gelu_pixel.h"
#include "runtime/error.h"

namespace ft {

// ----------------------------------------------------------------------------------------------------
// kernels

namespace {

// A block covers kTileChannels channels (threadIdx.x, consecutive in NHWC memory) and kTileRows pooled pixels
// at a time (threadIdx.y); blockIdx.y strides over the pooled pixels, its sums one row of the workspace.
constexpr int kTileChannels = 32;
constexpr int kTileRows = 8;
constexpr std::int64_t kPixelsPerThread = 16;
constexpr std::int64_t kMaxPartialRows = 512;

__device__ inline float load(const float* p, std::int64_t i) { return p[i]; }
__device__ inline float load(const __half* p, std::int64_t i) { return __half2float(p[i]); }
__device__ inline float load(const __nv_bfloat16* p, std::int64_t i) { return __bfloat162float(p[i]); }
__device__ inline void store(float* p, std::int64_t i, float v) { p[i] = v; }
__device__ inline void store(__half* p, std::int64_t i, float v) { p[i] = __float2half(v); }
__device__ inline void store(__nv_bfloat16* p, std::int64_t i, float v) { p[i] = __float2bfloat16(v); }

// Index arithmetic in I: 32-bit unsigned where every offset of the input map fits (fits_32_bits; the fast net's
// largest map, 1024 x 64 x 32 x 32, has 2^26 elements), 64-bit beyond. The offsets' divisions are most of these
// kernels' arithmetic, and a 64-bit division costs several times a 32-bit one.
template <typename I>
struct Geometry {
  I batch, channels, height, width, out_h, out_w, pixels;  // pixels: pooled per channel
  bool channels_last;
};

// Pooled pixel q (in n, h, w order): its image and position in the pooled map.
template <typename I>
struct PooledPixel {
  I n, h, w;
};
template <typename I>
__device__ inline PooledPixel<I> pooled_pixel(I q, const Geometry<I>& g) {
  const I per_image = g.out_h * g.out_w, n = q / per_image, r = q - n * per_image, h = r / g.out_w;
  return {n, h, r - h * g.out_w};
}

// Pooled pixel p of channel c: its offset in the pooled map, its value (pool 2: the maximum of its window,
// written to `pooled` with its position) as float.
template <typename T, int kPool, typename I>
__device__ inline float pooled_value(const T* x, T* pooled, std::uint8_t* argmax, const Geometry<I>& g,
                                     const PooledPixel<I>& p, I c) {
  const I o = map_offset(p.n, c, p.h, p.w, g.channels, g.out_h, g.out_w, g.channels_last);
  if constexpr (kPool == 1) {
    return load(x, o);
  } else {
    float v[4];
    for (int k = 0; k < 4; ++k)
      v[k] = load(x, map_offset(p.n, c, 2 * p.h + k / 2, 2 * p.w + k % 2, g.channels, g.height, g.width,
                                g.channels_last));
    std::uint8_t at;
    const float best = window_max(v, &at);
    store(pooled, o, best);
    argmax[o] = at;
    return best;
  }
}

// The block's two sums of each of its channels, added over threadIdx.y, into workspace rows blockIdx.y (first
// sum) and gridDim.y + blockIdx.y (second).
template <typename I>
__device__ inline void write_block_sums(double a, double b, double* partial, I channels, I c) {
  __shared__ double s_a[kTileRows][kTileChannels], s_b[kTileRows][kTileChannels];
  s_a[threadIdx.y][threadIdx.x] = a;
  s_b[threadIdx.y][threadIdx.x] = b;
  __syncthreads();
  if (threadIdx.y != 0 || c >= channels) return;
  for (int r = 1; r < kTileRows; ++r) a += s_a[r][threadIdx.x], b += s_b[r][threadIdx.x];
  partial[blockIdx.y * channels + c] = a;
  partial[(gridDim.y + blockIdx.y) * channels + c] = b;
}

// The first pooled pixel of a tile thread and the stride between its pixels (blockIdx.y strides over them).
template <typename I>
__device__ inline I first_pixel() {
  return static_cast<I>(blockIdx.y) * kTileRows + threadIdx.y;
}
template <typename I>
__device__ inline I pixel_stride() {
  return static_cast<I>(gridDim.y) * kTileRows;
}

// Training forward, pass 1: pools (pool 2) and sums each channel's pooled values and their squares.
template <typename T, int kPool, typename I>
__global__ void pool_stats_kernel(const T* __restrict__ x, T* __restrict__ pooled, std::uint8_t* __restrict__ argmax,
                                  double* __restrict__ partial, Geometry<I> g) {
  const I c = static_cast<I>(blockIdx.x) * kTileChannels + threadIdx.x;
  double sum = 0, squares = 0;
  if (c < g.channels)
    for (I q = first_pixel<I>(); q < g.pixels; q += pixel_stride<I>()) {
      const double v = pooled_value<T, kPool>(x, pooled, argmax, g, pooled_pixel(q, g), c);
      sum += v, squares += v * v;
    }
  write_block_sums(sum, squares, partial, g.channels, c);
}

// The finish kernels give each channel a warp (kWarp lanes), kChannelsPerBlock channels a block.
constexpr int kWarp = 32;
constexpr int kChannelsPerBlock = 4;

// The warp's channel; the whole warp shares it, so a warp past the last channel returns as one.
__device__ inline std::int64_t warp_channel() { return (blockIdx.x * blockDim.x + threadIdx.x) / kWarp; }

// Channel c's two sums over the workspace's `rows` rows (first sums in rows 0.., second in rows rows..): lane l
// adds rows l, l + 32, ..., then a fixed butterfly adds the lanes, the same order in every run (deterministic).
// Every lane gets both sums. Each row read by one lane instead of all by one thread: the rows' loads overlap.
__device__ inline void warp_row_sums(const double* partial, int rows, std::int64_t channels, std::int64_t c,
                                     double* first, double* second) {
  double a = 0, b = 0;
  for (int r = threadIdx.x % kWarp; r < rows; r += kWarp)
    a += partial[r * channels + c], b += partial[(rows + r) * channels + c];
  for (int offset = kWarp / 2; offset > 0; offset /= 2)
    a += __shfl_xor_sync(0xffffffffu, a, offset), b += __shfl_xor_sync(0xffffffffu, b, offset);
  *first = a, *second = b;
}

// Per channel: the rows' sums added; training: mean, invstd and the running statistics' move; eval: the
// running statistics' mean and invstd. Lane 0 of the channel's warp writes.
__global__ void finish_stats_kernel(const double* __restrict__ partial, int rows, float* running_mean,
                                    float* running_var, float* __restrict__ mean, float* __restrict__ invstd,
                                    std::int64_t channels, std::int64_t pixels, NormSettings n) {
  const std::int64_t c = warp_channel();
  if (c >= channels) return;
  if (!n.training) {
    if (threadIdx.x % kWarp != 0) return;
    mean[c] = running_mean[c];
    invstd[c] = static_cast<float>(1.0 / std::sqrt(static_cast<double>(running_var[c]) + n.eps));
    return;
  }
  double sum, squares;
  warp_row_sums(partial, rows, channels, c, &sum, &squares);
  if (threadIdx.x % kWarp != 0) return;
  const double count = static_cast<double>(pixels);
  const ChannelNorm stats = batch_norm_of(sum, squares, count, n.eps);
  mean[c] = static_cast<float>(stats.mean), invstd[c] = static_cast<float>(stats.invstd);
  if (running_mean) running_mean[c] = static_cast<float>(moved(running_mean[c], stats.mean, n.momentum));
  if (running_var)
    running_var[c] = static_cast<float>(moved(running_var[c], unbiased_variance(sum, squares, count), n.momentum));
}

template <typename I>
__device__ inline I channel_of(I i, const Geometry<I>& g) {
  return g.channels_last ? i % g.channels : (i / (g.out_h * g.out_w)) % g.channels;
}

template <typename I>
__device__ inline float value_or(const float* values, I c, float otherwise) {
  return values ? values[c] : otherwise;
}

// Forward, pass 2: every pooled element (in memory order) normalised, shifted and through GELU.
template <typename T, typename I>
__global__ void normalize_gelu_kernel(const T* __restrict__ source, T* __restrict__ y, const float* weight,
                                      const float* bias, const float* __restrict__ mean,
                                      const float* __restrict__ invstd, Geometry<I> g) {
  const I total = g.pixels * g.channels;
  const I stride = static_cast<I>(gridDim.x) * blockDim.x;
  for (I i = static_cast<I>(blockIdx.x) * blockDim.x + threadIdx.x; i < total; i += stride) {
    const I c = channel_of(i, g);
    const float z = value_or(weight, c, 1.f) * normalized(load(source, i), mean[c], invstd[c]) + value_or(bias, c, 0.f);
    store(y, i, gelu_of(z));
  }
}

// Backward, pass 1: per channel the sums of gz and gz xhat over the pooled elements.
template <typename T, typename I>
__global__ void grad_sums_kernel(const T* __restrict__ grad_y, const T* __restrict__ pooled, const float* weight,
                                 const float* bias, const float* __restrict__ mean, const float* __restrict__ invstd,
                                 double* __restrict__ partial, Geometry<I> g) {
  const I c = static_cast<I>(blockIdx.x) * kTileChannels + threadIdx.x;
  double sum_gz = 0, sum_gz_xhat = 0;
  if (c < g.channels) {
    const float w = value_or(weight, c, 1.f), b = value_or(bias, c, 0.f);
    for (I q = first_pixel<I>(); q < g.pixels; q += pixel_stride<I>()) {
      const PooledPixel<I> p = pooled_pixel(q, g);
      const I o = map_offset(p.n, c, p.h, p.w, g.channels, g.out_h, g.out_w, g.channels_last);
      const float xhat = normalized(load(pooled, o), mean[c], invstd[c]);
      const double gz = gelu_input_grad(load(grad_y, o), xhat, w, b);
      sum_gz += gz, sum_gz_xhat += gz * xhat;
    }
  }
  write_block_sums(sum_gz, sum_gz_xhat, partial, g.channels, c);
}

// Backward, the per-channel finish: grad_bias = sum gz, grad_weight = sum gz xhat, and both means for pass 2
// in the workspace's last 2 x channels doubles.
__global__ void finish_grad_sums_kernel(double* partial, int rows, float* grad_weight, float* grad_bias,
                                        std::int64_t channels, std::int64_t pixels) {
  const std::int64_t c = warp_channel();
  if (c >= channels) return;
  double sum_gz, sum_gz_xhat;
  warp_row_sums(partial, rows, channels, c, &sum_gz, &sum_gz_xhat);
  if (threadIdx.x % kWarp != 0) return;
  if (grad_bias) grad_bias[c] = static_cast<float>(sum_gz);
  if (grad_weight) grad_weight[c] = static_cast<float>(sum_gz_xhat);
  double* means = partial + 2 * rows * channels;
  means[c] = sum_gz / static_cast<double>(pixels);
  means[channels + c] = sum_gz_xhat / static_cast<double>(pixels);
}

// Backward, pass 2, a thread per pooled element (the sums' tiles): its gradient computed once and written to its
// own input element (pool 1) or to its window's maximum (pool 2), with zero to the window's other elements and,
// from the last pooled row and column, to an odd map's last input row and column, which no window covers.
template <typename T, int kPool, typename I>
__global__ void input_grad_kernel(const T* __restrict__ grad_y, const T* __restrict__ pooled,
                                  const std::uint8_t* __restrict__ argmax, const float* weight, const float* bias,
                                  const float* __restrict__ mean, const float* __restrict__ invstd,
                                  const double* __restrict__ means, T* __restrict__ grad_x, Geometry<I> g,
                                  bool training) {
  const I c = static_cast<I>(blockIdx.x) * kTileChannels + threadIdx.x;
  if (c >= g.channels) return;
  const float wc = value_or(weight, c, 1.f), bc = value_or(bias, c, 0.f), m = mean[c], is = invstd[c];
  const float mean_gz = static_cast<float>(means[c]), mean_gz_xhat = static_cast<float>(means[g.channels + c]);
  for (I q = first_pixel<I>(); q < g.pixels; q += pixel_stride<I>()) {
    const PooledPixel<I> p = pooled_pixel(q, g);
    const I o = map_offset(p.n, c, p.h, p.w, g.channels, g.out_h, g.out_w, g.channels_last);
    const float xhat = normalized(load(pooled, o), m, is);
    const float gz = gelu_input_grad(load(grad_y, o), xhat, wc, bc);
    const float grad = norm_input_grad(gz, xhat, wc, is, mean_gz, mean_gz_xhat, training);
    if constexpr (kPool == 1) {
      store(grad_x, o, grad);
    } else {
      const int at = argmax[o];
      const int rows = window_span(p.h, g.out_h, g.height), cols = window_span(p.w, g.out_w, g.width);
      for (int dh = 0; dh < rows; ++dh)
        for (int dw = 0; dw < cols; ++dw)
          store(grad_x, map_offset(p.n, c, 2 * p.h + dh, 2 * p.w + dw, g.channels, g.height, g.width,
                                   g.channels_last),
                dh < 2 && dw < 2 && dh * 2 + dw == at ? grad : 0.f);
    }
  }
}

template <typename I>
Geometry<I> geometry_of(const PoolNormShape& s) {
  return {static_cast<I>(s.batch),         static_cast<I>(s.channels),      static_cast<I>(s.height),
          static_cast<I>(s.width),         static_cast<I>(pooled_height(s)), static_cast<I>(pooled_width(s)),
          static_cast<I>(pooled_pixels(s)), s.channels_last};
}

bool fits_32_bits(const PoolNormShape& s) { return fits_32_bit_index(s.batch * s.channels * s.height * s.width); }

// The workspace rows (blockIdx.y's extent) of the per-block sums.
int partial_rows(const PoolNormShape& s) {
  const std::int64_t wanted = ceil_div<std::int64_t>(pooled_pixels(s), kTileRows * kPixelsPerThread);
  return static_cast<int>(std::clamp<std::int64_t>(wanted, 1, kMaxPartialRows));
}

dim3 tile_grid(const PoolNormShape& s) {
  return dim3(static_cast<unsigned>(ceil_div<std::int64_t>(s.channels, kTileChannels)),
              static_cast<unsigned>(partial_rows(s)));
}

// The input gradient's tiles: a pooled pixel per thread row, as many blocks as the grid's y allows.
dim3 pixel_grid(const PoolNormShape& s) {
  return dim3(static_cast<unsigned>(ceil_div<std::int64_t>(s.channels, kTileChannels)),
              static_cast<unsigned>(std::min(ceil_div<std::int64_t>(pooled_pixels(s), kTileRows), kMaxGridYZ)));
}

int channel_blocks(const PoolNormShape& s) {
  return static_cast<int>(ceil_div<std::int64_t>(s.channels, kChannelsPerBlock));
}

}  // namespace

// ----------------------------------------------------------------------------------------------------
// launchers

std::int64_t pool_norm_workspace(const PoolNormShape& s) { return (2 * partial_rows(s) + 2) * s.channels; }

namespace {

template <typename T, typename I>
void forward_indexed(const PoolNormForwardArgs<void, float>& a, double* workspace, const PoolNormShape& s,
                     const NormSettings& n, cudaStream_t stream) {
  const Geometry<I> g = geometry_of<I>(s);
  const T* x = static_cast<const T*>(a.x);
  T* pooled = static_cast<T*>(a.pooled);
  const dim3 block(kTileChannels, kTileRows);
  if (s.pool == 2) {  // eval pools too: the same kernel, its sums unused
    pool_stats_kernel<T, 2><<<tile_grid(s), block, 0, stream>>>(x, pooled, a.argmax, workspace, g);
    FT_CHECK_LAUNCH();
  } else if (n.training) {
    pool_stats_kernel<T, 1><<<tile_grid(s), block, 0, stream>>>(x, pooled, a.argmax, workspace, g);
    FT_CHECK_LAUNCH();
  }
  finish_stats_kernel<<<channel_blocks(s), kChannelsPerBlock * kWarp, 0, stream>>>(
      workspace, partial_rows(s), a.running_mean, a.running_var, a.mean, a.invstd, s.channels, pooled_pixels(s), n);
  FT_CHECK_LAUNCH();
  const T* source = s.pool == 2 ? pooled : x;
  normalize_gelu_kernel<T, I><<<grid_blocks(pooled_pixels(s) * s.channels), kThreadsPerBlock, 0, stream>>>(
      source, static_cast<T*>(a.y), a.weight, a.bias, a.mean, a.invstd, g);
  FT_CHECK_LAUNCH();
}

template <typename T, typename I>
void backward_indexed(const PoolNormBackwardArgs<void, float>& a, double* workspace, const PoolNormShape& s,
                      bool training, cudaStream_t stream) {
  const Geometry<I> g = geometry_of<I>(s);
  const T* grad_y = static_cast<const T*>(a.grad_y);
  const T* pooled = static_cast<const T*>(a.pooled);
  const int rows = partial_rows(s);
  const dim3 block(kTileChannels, kTileRows);
  grad_sums_kernel<T, I><<<tile_grid(s), block, 0, stream>>>(grad_y, pooled, a.weight, a.bias, a.mean, a.invstd,
                                                              workspace, g);
  FT_CHECK_LAUNCH();
  finish_grad_sums_kernel<<<channel_blocks(s), kChannelsPerBlock * kWarp, 0, stream>>>(
      workspace, rows, a.grad_weight, a.grad_bias, s.channels, pooled_pixels(s));
  FT_CHECK_LAUNCH();
  if (!a.grad_x) return;
  const double* means = workspace + 2 * rows * s.channels;
  T* grad_x = static_cast<T*>(a.grad_x);
  if (s.pool == 2)
    input_grad_kernel<T, 2, I><<<pixel_grid(s), block, 0, stream>>>(grad_y, pooled, a.argmax, a.weight, a.bias,
                                                                     a.mean, a.invstd, means, grad_x, g, training);
  else
    input_grad_kernel<T, 1, I><<<pixel_grid(s), block, 0, stream>>>(grad_y, pooled, a.argmax, a.weight, a.bias,
                                                                     a.mean, a.invstd, means, grad_x, g, training);
  FT_CHECK_LAUNCH();
}

template <typename T>
void forward_typed(const PoolNormForwardArgs<void, float>& a, double* workspace, const PoolNormShape& s,
                   const NormSettings& n, cudaStream_t stream) {
  if (fits_32_bits(s)) return forward_indexed<T, std::uint32_t>(a, workspace, s, n, stream);
  forward_indexed<T, std::int64_t>(a, workspace, s, n, stream);
}

template <typename T>
void backward_typed(const PoolNormBackwardArgs<void, float>& a, double* workspace, const PoolNormShape& s,
                    bool training, cudaStream_t stream) {
  if (fits_32_bits(s)) return backward_indexed<T, std::uint32_t>(a, workspace, s, training, stream);
  backward_indexed<T, std::int64_t>(a, workspace, s, training, stream);
}

}  // namespace

void pool_norm_gelu_forward_device(MapType type, const PoolNormForwardArgs<void, float>& a, double* workspace,
                                   const PoolNormShape& s, const NormSettings& n, cudaStream_t stream) {
  check_pool_norm_shape(s, n.training);
  switch (type) {
    case MapType::f32: return forward_typed<float>(a, workspace, s, n, stream);
    case MapType::f16: return forward_typed<__half>(a, workspace, s, n, stream);
    case MapType::bf16: return forward_typed<__nv_bfloat16>(a, workspace, s, n, stream);
  }
}

void pool_norm_gelu_backward_device(MapType type, const PoolNormBackwardArgs<void, float>& a, double* workspace,
                                    const PoolNormShape& s, bool training, cudaStream_t stream) {
  check_pool_norm_shape(s, training);
  switch (type) {
    case MapType::f32: return backward_typed<float>(a, workspace, s, training, stream);
    case MapType::f16: return backward_typed<__half>(a, workspace, s, training, stream);
    case MapType::bf16: return backward_typed<__nv_bfloat16>(a, workspace, s, training, stream);
  }
}

}  // namespace ft
