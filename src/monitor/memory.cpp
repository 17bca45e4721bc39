// Memory and device-name queries. CUDA calls are compiled only into CUDA builds; CPU figures come from
// the kernel (ru_maxrss, /proc/cpuinfo).
#include "monitor/memory.h"

#include <sys/resource.h>

#include <fstream>

#ifdef FUSETRAIN_WITH_CUDA
#include <ATen/Context.h>
#include <c10/cuda/CUDACachingAllocator.h>
#include <cuda_runtime.h>
#endif

namespace ft {

std::int64_t peak_memory_bytes(const at::Device& device) {
#ifdef FUSETRAIN_WITH_CUDA
  if (device.is_cuda()) {
    at::globalContext().lazyInitDevice(at::kCUDA);  // the allocator's statistics exist only after this
    const auto stats = c10::cuda::CUDACachingAllocator::getDeviceStats(device.index());
    return stats.allocated_bytes[static_cast<std::size_t>(c10::CachingAllocator::StatType::AGGREGATE)].peak;
  }
#endif
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<std::int64_t>(usage.ru_maxrss) * 1024;
}

void reset_peak_memory(const at::Device& device) {
#ifdef FUSETRAIN_WITH_CUDA
  if (device.is_cuda()) {
    at::globalContext().lazyInitDevice(at::kCUDA);
    c10::cuda::CUDACachingAllocator::resetPeakStats(device.index());
  }
#endif
  (void)device;
}

std::string device_name(const at::Device& device) {
#ifdef FUSETRAIN_WITH_CUDA
  if (device.is_cuda()) {
    cudaDeviceProp prop{};
    if (cudaGetDeviceProperties(&prop, device.index()) == cudaSuccess) return prop.name;
  }
#endif
  std::ifstream cpuinfo("/proc/cpuinfo");
  for (std::string line; std::getline(cpuinfo, line);) {
    if (line.rfind("model name", 0) == 0) {
      const auto colon = line.find(':');
      if (colon != std::string::npos) return "cpu: " + line.substr(colon + 2);
    }
  }
  return "cpu";
}

}  // namespace ft
