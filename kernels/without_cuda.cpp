// The CUDA entry points of kernels/ in builds without CUDA (compiled only there, in place of the .cu
// files): no GPU is ever available, and each launcher raises cuda_not_built()'s error.
#include "kernels/augment.h"
#include "kernels/common.h"
#include "kernels/conv_relu.h"
#include "kernels/device_query.h"
#include "kernels/max_pool.h"
#include "kernels/pool_norm_gelu.h"
#include "kernels/rgb_to_gray.h"
#include "kernels/stall.h"

namespace ft {

bool cuda_kernels_built() { return false; }
bool cuda_kernels_available() { return false; }
std::string cuda_pci_bus_id(int) { return ""; }
std::string cuda_device_name(int) { return ""; }

void augment_batch_device(const std::uint8_t*, const std::int64_t*, std::int64_t, std::int64_t, const AugmentParams&,
                          float*, float*, cudaStream_t) {
  cuda_not_built("augment_batch_device");
}

void conv_bias_relu_device(const float*, const float*, const float*, float*, const ConvGeometry&, cudaStream_t) {
  cuda_not_built("conv_bias_relu_device");
}

void max_pool2_forward_device(MapType, const void*, void*, std::uint8_t*, const MaxPoolShape&, cudaStream_t) {
  cuda_not_built("max_pool2_forward_device");
}

void max_pool2_backward_device(MapType, const void*, const std::uint8_t*, void*, const MaxPoolShape&, cudaStream_t) {
  cuda_not_built("max_pool2_backward_device");
}

void stall_stream_device(double, cudaStream_t) { cuda_not_built("stall_stream_device"); }

std::int64_t pool_norm_workspace(const PoolNormShape&) { cuda_not_built("pool_norm_workspace"); }

void pool_norm_gelu_forward_device(MapType, const PoolNormForwardArgs<void, float>&, double*, const PoolNormShape&,
                                   const NormSettings&, cudaStream_t) {
  cuda_not_built("pool_norm_gelu_forward_device");
}

void pool_norm_gelu_backward_device(MapType, const PoolNormBackwardArgs<void, float>&, double*, const PoolNormShape&,
                                    bool, cudaStream_t) {
  cuda_not_built("pool_norm_gelu_backward_device");
}

void rgb_to_gray_device(const std::uint8_t*, std::uint8_t*, std::size_t, cudaStream_t) {
  cuda_not_built("rgb_to_gray_device");
}

void rgb_to_gray_staged(const std::uint8_t*, std::uint8_t*, std::size_t, cudaStream_t) {
  cuda_not_built("rgb_to_gray_staged");
}

}  // namespace ft
