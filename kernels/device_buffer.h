// A block of device memory owned for one scope (cudaMalloc / cudaFree), for launchers that stage host
// data through the GPU. Included only by files compiled in CUDA builds.
#pragma once

#include <cstddef>

#include "kernels/cuda_check.h"

namespace ft {

class DeviceBuffer {
 public:
  explicit DeviceBuffer(std::size_t bytes) { FT_CHECK_CUDA(cudaMalloc(&data_, bytes > 0 ? bytes : 1)); }
  ~DeviceBuffer() { cudaFree(data_); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  template <typename T = void>
  T* get() const {
    return static_cast<T*>(data_);
  }

 private:
  void* data_ = nullptr;
};

}  // namespace ft
