// What a LibTorch op over kernels/ needs of a tensor: its data as a pointer, the type and layout it is computed
// in, the kernels' element type of its maps and the CUDA stream its device is current on.
#pragma once

#include <ATen/ATen.h>

#include "kernels/common.h"

namespace ft {

// t's data as T* (the kernels' view of it), null where t is undefined.
template <typename T>
T* data_or_null(const at::Tensor& t) {
  return t.defined() ? static_cast<T*>(t.data_ptr()) : nullptr;
}

// The type an op over kernels/ computes t's map in: t's own on CUDA (the kernels refuse any but float32, float16
// and bfloat16); on the CPU, the references' float64 for float64 and float32 for the rest.
at::ScalarType kernel_compute_type(const at::Tensor& t);

// A map's layout as LibTorch's memory format: channels_last or NCHW (contiguous).
at::MemoryFormat map_memory_format(bool channels_last);

// t as the kernels or the CPU references take its map: in kernel_compute_type(t), laid out as channels_last says.
at::Tensor kernel_map(const at::Tensor& t, bool channels_last);

// float32, float16 or bfloat16 as the kernels' MapType; any other type is refused naming `op`.
MapType kernel_map_type(const at::Tensor& t, const char* op);

// The current stream of t's CUDA device (the one LibTorch's own kernels run on).
cudaStream_t current_cuda_stream(const at::Tensor& t);

}  // namespace ft
