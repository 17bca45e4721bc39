// Device queries of a CUDA build through the CUDA runtime. Builds without CUDA compile without_cuda.cpp
// in its place.
#include <cuda_runtime.h>

#include "kernels/device_query.h"

namespace ft {

bool cuda_kernels_built() { return true; }

bool cuda_kernels_available() {
  int count = 0;
  const bool found = cudaGetDeviceCount(&count) == cudaSuccess && count > 0;
  (void)cudaGetLastError();  // no device is an answer here, not an error for the next launch check
  return found;
}

std::string cuda_pci_bus_id(int index) {
  char bus_id[64] = {0};
  if (cudaDeviceGetPCIBusId(bus_id, sizeof(bus_id), index) != cudaSuccess) return (void)cudaGetLastError(), "";
  return bus_id;
}

std::string cuda_device_name(int index) {
  cudaDeviceProp prop{};
  if (cudaGetDeviceProperties(&prop, index) != cudaSuccess) return (void)cudaGetLastError(), "";
  return prop.name;
}

}  // namespace ft
