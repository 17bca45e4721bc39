// CUDA max-pool -> BatchNorm -> GELU, forward and backward, over fp32, fp16 or bf16 maps in NHWC or NCHW: per-block
// channel sums into a workspace (deterministic, no atomics), a per-channel finish, then one element-wise pass.
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

struct Geometry {
  std::int64_t batch, channels, height, width, out_h, out_w, pixels;  // pixels: pooled per channel
  bool channels_last;
};

// Pooled pixel q (in n, h, w order) of channel c: its offset in the pooled map, its value (pool 2: the maximum
// of its window, written to `pooled` with its position) as float.
template <typename T, int kPool>
__device__ inline float pooled_value(const T* x, T* pooled, std::uint8_t* argmax, const Geometry& g, std::int64_t q,
                                     std::int64_t c) {
  const std::int64_t per_image = g.out_h * g.out_w, n = q / per_image, h = (q % per_image) / g.out_w, w = q % g.out_w;
  const std::int64_t o = map_offset(n, c, h, w, g.channels, g.out_h, g.out_w, g.channels_last);
  if (kPool == 1) return load(x, o);
  float v[4];
  for (int k = 0; k < 4; ++k)
    v[k] = load(x, map_offset(n, c, 2 * h + k / 2, 2 * w + k % 2, g.channels, g.height, g.width, g.channels_last));
  std::uint8_t at;
  const float best = window_max(v, &at);
  store(pooled, o, best);
  argmax[o] = at;
  return best;
}

// The block's two sums of each of its channels, added over threadIdx.y, into workspace rows blockIdx.y (first
// sum) and gridDim.y + blockIdx.y (second).
__device__ inline void write_block_sums(double a, double b, double* partial, std::int64_t channels, std::int64_t c) {
  __shared__ double s_a[kTileRows][kTileChannels], s_b[kTileRows][kTileChannels];
  s_a[threadIdx.y][threadIdx.x] = a;
  s_b[threadIdx.y][threadIdx.x] = b;
  __syncthreads();
  if (threadIdx.y != 0 || c >= channels) return;
  for (int r = 1; r < kTileRows; ++r) a += s_a[r][threadIdx.x], b += s_b[r][threadIdx.x];
  partial[blockIdx.y * channels + c] = a;
  partial[(gridDim.y + blockIdx.y) * channels + c] = b;
}

// Training forward, pass 1: pools (pool 2) and sums each channel's pooled values and their squares.
template <typename T, int kPool>
__global__ void pool_stats_kernel(const T* __restrict__ x, T* __restrict__ pooled, std::uint8_t* __restrict__ argmax,
                                  double* __restrict__ partial, Geometry g) {
  const std::int64_t c = blockIdx.x * kTileChannels + threadIdx.x;
  double sum = 0, squares = 0;
  if (c < g.channels)
    for (std::int64_t q = blockIdx.y * kTileRows + threadIdx.y; q < g.pixels; q += gridDim.y * kTileRows) {
      const double v = pooled_value<T, kPool>(x, pooled, argmax, g, q, c);
      sum += v, squares += v * v;
    }
  write_block_sums(sum, squares, partial, g.channels, c);
}

// Per channel: the rows' sums added; training: mean, invstd and the running statistics' move; eval: the
// running statistics' mean and invstd.
__global__ void finish_stats_kernel(const double* __restrict__ partial, int rows, float* running_mean,
                                    float* running_var, float* __restrict__ mean, float* __restrict__ invstd,
                                    Geometry g, NormSettings n) {
  const std::int64_t c = blockIdx.x * blockDim.x + threadIdx.x;
  if (c >= g.channels) return;
  if (!n.training) {
    mean[c] = running_mean[c];
    invstd[c] = static_cast<float>(1.0 / std::sqrt(static_cast<double>(running_var[c]) + n.eps));
    return;
  }
  double sum = 0, squares = 0;
  for (int r = 0; r < rows; ++r) sum += partial[r * g.channels + c], squares += partial[(rows + r) * g.channels + c];
  const double count = static_cast<double>(g.pixels);
  const ChannelNorm stats = batch_norm_of(sum, squares, count, n.eps);
  mean[c] = static_cast<float>(stats.mean), invstd[c] = static_cast<float>(stats.invstd);
  if (running_mean) running_mean[c] = static_cast<float>(moved(running_mean[c], stats.mean, n.momentum));
  if (running_var)
    running_var[c] = static_cast<float>(moved(running_var[c], unbiased_variance(sum, squares, count), n.momentum));
}

__device__ inline std::int64_t channel_of(std::int64_t i, const Geometry& g) {
  return g.channels_last ? i % g.channels : (i / (g.out_h * g.out_w)) % g.channels;
}

__device__ inline float value_or(const float* values, std::int64_t c, float otherwise) {
  return values ? values[c] : otherwise;
}

// Forward, pass 2: every pooled element (in memory order) normalised, shifted and through GELU.
template <typename T>
__global__ void normalize_gelu_kernel(const T* __restrict__ source, T* __restrict__ y, const float* weight,
                                      const float* bias, const float* __restrict__ mean,
                                      const float* __restrict__ invstd, Geometry g) {
  const std::int64_t total = g.pixels * g.channels;
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const std::int64_t c = channel_of(i, g);
    const float z = value_or(weight, c, 1.f) * normalized(load(source, i), mean[c], invstd[c]) + value_or(bias, c, 0.f);
    store(y, i, gelu_of(z));
  }
}

// Backward, pass 1: per channel the sums of gz and gz xhat over the pooled elements.
template <typename T>
__global__ void grad_sums_kernel(const T* __restrict__ grad_y, const T* __restrict__ pooled, const float* weight,
                                 const float* bias, const float* __restrict__ mean, const float* __restrict__ invstd,
                                 double* __restrict__ partial, Geometry g) {
  const std::int64_t c = blockIdx.x * kTileChannels + threadIdx.x;
  double sum_gz = 0, sum_gz_xhat = 0;
  if (c < g.channels) {
    const float w = value_or(weight, c, 1.f), b = value_or(bias, c, 0.f);
    for (std::int64_t q = blockIdx.y * kTileRows + threadIdx.y; q < g.pixels; q += gridDim.y * kTileRows) {
      const std::int64_t per_image = g.out_h * g.out_w;
      const std::int64_t o = map_offset(q / per_image, c, (q % per_image) / g.out_w, q % g.out_w, g.channels, g.out_h,
                                        g.out_w, g.channels_last);
      const float xhat = normalized(load(pooled, o), mean[c], invstd[c]);
      const double gz = gelu_input_grad(load(grad_y, o), xhat, w, b);
      sum_gz += gz, sum_gz_xhat += gz * xhat;
    }
  }
  write_block_sums(sum_gz, sum_gz_xhat, partial, g.channels, c);
}

// Backward, the per-channel finish: grad_bias = sum gz, grad_weight = sum gz xhat, and both means for pass 2
// in the workspace's last 2 x channels doubles.
__global__ void finish_grad_sums_kernel(double* partial, int rows, float* grad_weight, float* grad_bias, Geometry g) {
  const std::int64_t c = blockIdx.x * blockDim.x + threadIdx.x;
  if (c >= g.channels) return;
  double sum_gz = 0, sum_gz_xhat = 0;
  for (int r = 0; r < rows; ++r)
    sum_gz += partial[r * g.channels + c], sum_gz_xhat += partial[(rows + r) * g.channels + c];
  if (grad_bias) grad_bias[c] = static_cast<float>(sum_gz);
  if (grad_weight) grad_weight[c] = static_cast<float>(sum_gz_xhat);
  double* means = partial + 2 * rows * g.channels;
  means[c] = sum_gz / static_cast<double>(g.pixels);
  means[g.channels + c] = sum_gz_xhat / static_cast<double>(g.pixels);
}

// Backward, pass 2: every input element once (in memory order): its window's maximum gets the gradient of the
// pooled element, every other element (and a row or column no window covers) zero.
template <typename T, int kPool>
__global__ void input_grad_kernel(const T* __restrict__ grad_y, const T* __restrict__ pooled,
                                  const std::uint8_t* __restrict__ argmax, const float* weight, const float* bias,
                                  const float* __restrict__ mean, const float* __restrict__ invstd,
                                  const double* __restrict__ means, T* __restrict__ grad_x, Geometry g, bool training) {
  const std::int64_t total = g.batch * g.channels * g.height * g.width;
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    std::int64_t c, n, h, w;
    if (g.channels_last)
      c = i % g.channels, w = (i / g.channels) % g.width, h = (i / g.channels / g.width) % g.height,
      n = i / g.channels / g.width / g.height;
    else
      w = i % g.width, h = (i / g.width) % g.height, c = (i / g.width / g.height) % g.channels,
      n = i / g.width / g.height / g.channels;
    const std::int64_t o = map_offset(n, c, h / kPool, w / kPool, g.channels, g.out_h, g.out_w, g.channels_last);
    const bool inside = h / kPool < g.out_h && w / kPool < g.out_w;
    if (!inside || (kPool == 2 && argmax[o] != (h % 2) * 2 + w % 2)) {
      store(grad_x, i, 0.f);
      continue;
    }
    const float wc = value_or(weight, c, 1.f), xhat = normalized(load(pooled, o), mean[c], invstd[c]);
    const float gz = gelu_input_grad(load(grad_y, o), xhat, wc, value_or(bias, c, 0.f));
    store(grad_x, i, norm_input_grad(gz, xhat, wc, invstd[c], static_cast<float>(means[c]),
                                     static_cast<float>(means[g.channels + c]), training));
  }
}

Geometry geometry_of(const PoolNormShape& s) {
  return {s.batch, s.channels, s.height, s.width, pooled_height(s), pooled_width(s), pooled_pixels(s), s.channels_last};
}

// The workspace rows (blockIdx.y's extent) of the per-block sums.
int partial_rows(const PoolNormShape& s) {
  return static_cast<int>(std::clamp<std::int64_t>(ceil_div<std::int64_t>(pooled_pixels(s), kTileRows * kPixelsPerThread),
                                                    1, kMaxPartialRows));
}

dim3 tile_grid(const PoolNormShape& s) {
  return dim3(static_cast<unsigned>(ceil_div<std::int64_t>(s.channels, kTileChannels)),
              static_cast<unsigned>(partial_rows(s)));
}

int channel_blocks(const PoolNormShape& s) { return static_cast<int>(ceil_div<std::int64_t>(s.channels, 128)); }

}  // namespace

// ----------------------------------------------------------------------------------------------------
// launchers

std::int64_t pool_norm_workspace(const PoolNormShape& s) { return (2 * partial_rows(s) + 2) * s.channels; }

namespace {

template <typename T>
void forward_typed(const PoolNormForwardArgs<void, float>& a, double* workspace, const PoolNormShape& s,
                   const NormSettings& n, cudaStream_t stream) {
  const Geometry g = geometry_of(s);
  const T* x = static_cast<const T*>(a.x);
  T* pooled = static_cast<T*>(a.pooled);
  if (n.training) {
    const dim3 block(kTileChannels, kTileRows);
    if (s.pool == 2)
      pool_stats_kernel<T, 2><<<tile_grid(s), block, 0, stream>>>(x, pooled, a.argmax, workspace, g);
    else
      pool_stats_kernel<T, 1><<<tile_grid(s), block, 0, stream>>>(x, pooled, a.argmax, workspace, g);
    FT_CHECK_LAUNCH();
  } else if (s.pool == 2) {  // eval still pools: the same kernel, its sums unused
    pool_stats_kernel<T, 2><<<tile_grid(s), dim3(kTileChannels, kTileRows), 0, stream>>>(x, pooled, a.argmax,
                                                                                          workspace, g);
    FT_CHECK_LAUNCH();
  }
  finish_stats_kernel<<<channel_blocks(s), 128, 0, stream>>>(workspace, partial_rows(s), a.running_mean,
                                                              a.running_var, a.mean, a.invstd, g, n);
  FT_CHECK_LAUNCH();
  const T* source = s.pool == 2 ? pooled : x;
  normalize_gelu_kernel<T><<<grid_blocks(g.pixels * g.channels), kThreadsPerBlock, 0, stream>>>(
      source, static_cast<T*>(a.y), a.weight, a.bias, a.mean, a.invstd, g);
  FT_CHECK_LAUNCH();
}

template <typename T>
void backward_typed(const PoolNormBackwardArgs<void, float>& a, double* workspace, const PoolNormShape& s,
                    bool training, cudaStream_t stream) {
  const Geometry g = geometry_of(s);
  const T* grad_y = static_cast<const T*>(a.grad_y);
  const T* pooled = static_cast<const T*>(a.pooled);
  const int rows = partial_rows(s);
  grad_sums_kernel<T><<<tile_grid(s), dim3(kTileChannels, kTileRows), 0, stream>>>(
      grad_y, pooled, a.weight, a.bias, a.mean, a.invstd, workspace, g);
  FT_CHECK_LAUNCH();
  finish_grad_sums_kernel<<<channel_blocks(s), 128, 0, stream>>>(workspace, rows, a.grad_weight, a.grad_bias, g);
  FT_CHECK_LAUNCH();
  if (!a.grad_x) return;
  const double* means = workspace + 2 * rows * s.channels;
  const std::int64_t inputs = s.batch * s.channels * s.height * s.width;
  T* grad_x = static_cast<T*>(a.grad_x);
  if (s.pool == 2)
    input_grad_kernel<T, 2><<<grid_blocks(inputs), kThreadsPerBlock, 0, stream>>>(
        grad_y, pooled, a.argmax, a.weight, a.bias, a.mean, a.invstd, means, grad_x, g, training);
  else
    input_grad_kernel<T, 1><<<grid_blocks(inputs), kThreadsPerBlock, 0, stream>>>(
        grad_y, pooled, a.argmax, a.weight, a.bias, a.mean, a.invstd, means, grad_x, g, training);
  FT_CHECK_LAUNCH();
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
