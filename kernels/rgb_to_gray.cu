// CUDA RGB -> gray kernel (one thread per pixel, uint8 in and out) and its host launchers.
// The arithmetic is gray_weights.h's, shared with the CPU reference, so results agree bit for bit.
#include "kernels/cuda_check.h"
#include "kernels/gray_weights.h"
#include "kernels/rgb_to_gray.h"

namespace ft {

__global__ void rgb_to_gray_kernel(const std::uint8_t* __restrict__ rgb, std::uint8_t* __restrict__ gray,
                                   std::size_t pixels) {
  const std::size_t stride = static_cast<std::size_t>(blockDim.x) * gridDim.x;
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < pixels; i += stride)
    gray[i] = gray_of(rgb[3 * i], rgb[3 * i + 1], rgb[3 * i + 2]);
}

bool cuda_kernels_available() {
  int count = 0;
  return cudaGetDeviceCount(&count) == cudaSuccess && count > 0;
}

void rgb_to_gray_device(const std::uint8_t* d_rgb, std::uint8_t* d_gray, std::size_t pixels, void* stream) {
  if (pixels == 0) return;
  const int threads = 256;
  const std::size_t wanted = (pixels + threads - 1) / threads;
  const int blocks = static_cast<int>(wanted < 65535 ? wanted : 65535);
  rgb_to_gray_kernel<<<blocks, threads, 0, static_cast<cudaStream_t>(stream)>>>(d_rgb, d_gray, pixels);
  FT_CHECK_LAUNCH();
}

void rgb_to_gray_cuda(const std::uint8_t* rgb, std::uint8_t* gray, std::size_t pixels, void* stream) {
  auto s = static_cast<cudaStream_t>(stream);
  std::uint8_t *d_rgb = nullptr, *d_gray = nullptr;
  FT_CHECK_CUDA(cudaMalloc(&d_rgb, pixels * 3 + 1));
  FT_CHECK_CUDA(cudaMalloc(&d_gray, pixels + 1));
  FT_CHECK_CUDA(cudaMemcpyAsync(d_rgb, rgb, pixels * 3, cudaMemcpyHostToDevice, s));
  rgb_to_gray_device(d_rgb, d_gray, pixels, stream);
  FT_CHECK_CUDA(cudaMemcpyAsync(gray, d_gray, pixels, cudaMemcpyDeviceToHost, s));
  FT_CHECK_CUDA(cudaStreamSynchronize(s));
  FT_CHECK_CUDA(cudaFree(d_rgb));
  FT_CHECK_CUDA(cudaFree(d_gray));
}

}  // namespace ft
