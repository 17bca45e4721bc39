// The tensor-to-kernel glue of the ops over kernels/: a tensor's compute type and layout, MapType and its device's
// current stream.
#include "models/kernel_tensors.h"

#include <ATen/DeviceAccelerator.h>

#include "runtime/error.h"

namespace ft {

at::ScalarType kernel_compute_type(const at::Tensor& t) {
  if (t.is_cuda()) return t.scalar_type();
  return t.scalar_type() == at::kDouble ? at::kDouble : at::kFloat;
}

at::MemoryFormat map_memory_format(bool channels_last) {
  return channels_last ? at::MemoryFormat::ChannelsLast : at::MemoryFormat::Contiguous;
}

at::Tensor kernel_map(const at::Tensor& t, bool channels_last) {
  return t.to(kernel_compute_type(t)).contiguous(map_memory_format(channels_last));
}

MapType kernel_map_type(const at::Tensor& t, const char* op) {
  switch (t.scalar_type()) {
    case at::kFloat: return MapType::f32;
    case at::kHalf: return MapType::f16;
    case at::kBFloat16: return MapType::bf16;
    default: throw Error(cat(op, ": the CUDA kernels take float32, float16 or bfloat16, not ", t.scalar_type()));
  }
}

cudaStream_t current_cuda_stream(const at::Tensor& t) {
  return static_cast<cudaStream_t>(at::accelerator::getCurrentStream(t.device().index()).native_handle());
}

}  // namespace ft
