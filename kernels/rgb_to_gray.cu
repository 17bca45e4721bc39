// CUDA RGB -> gray kernel (one thread per pixel, uint8 in and out) and its launchers. The arithmetic is
// rgb_to_gray_pixel.h's, shared with the CPU reference, so results agree bit for bit.
#include "kernels/cuda_check.h"
#include "kernels/device_buffer.h"
#include "kernels/host_sync.h"
#include "kernels/rgb_to_gray.h"
#include "kernels/rgb_to_gray_pixel.h"

namespace ft {

// ----------------------------------------------------------------------------------------------------
// kernels

__global__ void rgb_to_gray_kernel(const std::uint8_t* __restrict__ rgb, std::uint8_t* __restrict__ gray,
                                   std::size_t pixels) {
  const std::size_t stride = static_cast<std::size_t>(blockDim.x) * gridDim.x;
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < pixels; i += stride)
    gray[i] = gray_of(rgb[3 * i], rgb[3 * i + 1], rgb[3 * i + 2]);
}

// ----------------------------------------------------------------------------------------------------
// launchers

void rgb_to_gray_device(const std::uint8_t* d_rgb, std::uint8_t* d_gray, std::size_t pixels, cudaStream_t stream) {
  if (pixels == 0) return;
  rgb_to_gray_kernel<<<grid_blocks(static_cast<std::int64_t>(pixels)), kThreadsPerBlock, 0, stream>>>(
      d_rgb, d_gray, pixels);
  FT_CHECK_LAUNCH();
}

void rgb_to_gray_staged(const std::uint8_t* rgb, std::uint8_t* gray, std::size_t pixels, cudaStream_t stream) {
  if (pixels == 0) return;
  DeviceBuffer d_rgb(pixels * 3), d_gray(pixels);
  FT_CHECK_CUDA(cudaMemcpyAsync(d_rgb.get(), rgb, pixels * 3, cudaMemcpyHostToDevice, stream));
  rgb_to_gray_device(d_rgb.get<std::uint8_t>(), d_gray.get<std::uint8_t>(), pixels, stream);
  FT_CHECK_CUDA(cudaMemcpyAsync(gray, d_gray.get(), pixels, cudaMemcpyDeviceToHost, stream));
  sync_stream(stream);
}

}  // namespace ft
