// Memory and device-name queries. CUDA calls are compiled only into CUDA builds; CPU figures come from
// the kernel (ru_maxrss, /proc/cpuinfo) and from a byte count kept around LibTorch's CPU allocator.
#include "monitor/memory.h"

#include <c10/core/CPUAllocator.h>
#include <sys/resource.h>

#include <algorithm>
#include <fstream>
#include <mutex>
#include <unordered_map>

#ifdef FUSETRAIN_WITH_CUDA
#include <ATen/Context.h>
#include <c10/cuda/CUDACachingAllocator.h>
#include <cuda_runtime.h>
#endif

namespace ft {
namespace {

// Bytes of live CPU tensors and their peak. Never destroyed: tensors may be freed during exit.
struct CpuTensorBytes {
  std::mutex mutex;
  std::unordered_map<void*, std::size_t> sizes;
  std::int64_t live = 0, peak = 0;
  c10::DeleterFnPtr inner_delete = nullptr;
};

CpuTensorBytes& cpu_bytes() {
  static auto* bytes = new CpuTensorBytes;
  return *bytes;
}

void release_counted(void* data) {
  auto& b = cpu_bytes();
  {
    std::lock_guard<std::mutex> lock(b.mutex);
    const auto it = b.sizes.find(data);
    if (it != b.sizes.end()) b.live -= static_cast<std::int64_t>(it->second), b.sizes.erase(it);
  }
  b.inner_delete(data);
}

// LibTorch's CPU allocator with every block's size kept until its deleter runs. Blocks keep the inner
// allocator's pointer as their context, so raw_allocate and raw_deallocate work as before.
class CountingCpuAllocator final : public c10::Allocator {
 public:
  explicit CountingCpuAllocator(c10::Allocator* inner) : inner_(inner) {}
  c10::DataPtr allocate(std::size_t n) override {
    void* data = inner_->raw_allocate(n);
    if (data != nullptr) {
      auto& b = cpu_bytes();
      std::lock_guard<std::mutex> lock(b.mutex);
      b.sizes[data] = n;
      b.live += static_cast<std::int64_t>(n);
      b.peak = std::max(b.peak, b.live);
    }
    return {data, data, &release_counted, c10::Device(c10::DeviceType::CPU)};
  }
  c10::DeleterFnPtr raw_deleter() const override { return &release_counted; }
  void copy_data(void* dest, const void* src, std::size_t count) const override {
    default_copy_data(dest, src, count);
  }

 private:
  c10::Allocator* inner_;
};

// Wraps the CPU allocator once, before main; an allocator without a raw deleter is left alone (peak stays 0).
bool count_cpu_tensor_bytes() {
  c10::Allocator* inner = c10::GetCPUAllocator();
  if (inner == nullptr || inner->raw_deleter() == nullptr) return false;
  cpu_bytes().inner_delete = inner->raw_deleter();
  c10::SetCPUAllocator(new CountingCpuAllocator(inner), /*priority=*/0);
  return true;
}

[[maybe_unused]] const bool counting_cpu_tensor_bytes = count_cpu_tensor_bytes();

}  // namespace

std::int64_t peak_allocated_bytes(const at::Device& device) {
  if (device.is_cuda()) return peak_memory_bytes(device);
  auto& b = cpu_bytes();
  std::lock_guard<std::mutex> lock(b.mutex);
  return b.peak;
}

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
  (void)device;
#ifdef FUSETRAIN_WITH_CUDA
  if (device.is_cuda()) {
    at::globalContext().lazyInitDevice(at::kCUDA);
    c10::cuda::CUDACachingAllocator::resetPeakStats(device.index());
    return;
  }
#endif
  auto& b = cpu_bytes();
  std::lock_guard<std::mutex> lock(b.mutex);
  b.peak = b.live;
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
