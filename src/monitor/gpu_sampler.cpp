// NVML is loaded at run time (dlopen of the driver's libnvidia-ml.so.1), so the same binary runs on
// hosts without a driver. Only the four NVML entry points used here are declared, with NVML's C ABI.
#include "monitor/gpu_sampler.h"

#include <dlfcn.h>

#include <chrono>

#include "kernels/device_query.h"
#include "runtime/error.h"

namespace ft {
namespace {

struct NvmlUtilization {
  unsigned int gpu, memory;  // percent of time busy over the last sample period
};
using NvmlDevice = void*;
using InitFn = int (*)();
using ShutdownFn = int (*)();
using ByPciFn = int (*)(const char*, NvmlDevice*);
using UtilizationFn = int (*)(NvmlDevice, NvmlUtilization*);

}  // namespace

GpuSampler::GpuSampler(int cuda_device, int rank, double hz) {
  if (!cuda_kernels_built() || cuda_device < 0) {
    status_ = cuda_kernels_built() ? "no GPU" : "built without CUDA";
    return;
  }
  const std::string bus_id = cuda_pci_bus_id(cuda_device);
  if (bus_id.empty()) {
    status_ = "cannot read the GPU's PCI bus id";
    return;
  }
  void* library = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!library) {
    status_ = "libnvidia-ml.so.1 not found";
    return;
  }
  auto init = reinterpret_cast<InitFn>(dlsym(library, "nvmlInit_v2"));
  auto shutdown = reinterpret_cast<ShutdownFn>(dlsym(library, "nvmlShutdown"));
  auto by_pci = reinterpret_cast<ByPciFn>(dlsym(library, "nvmlDeviceGetHandleByPciBusId_v2"));
  auto utilization = reinterpret_cast<UtilizationFn>(dlsym(library, "nvmlDeviceGetUtilizationRates"));
  NvmlDevice device = nullptr;
  if (!init || !shutdown || !by_pci || !utilization || init() != 0) {
    status_ = "NVML could not be initialised";
    dlclose(library);
    return;
  }
  if (by_pci(bus_id.c_str(), &device) != 0) {
    status_ = "NVML does not know the GPU at " + bus_id;
    shutdown();
    dlclose(library);
    return;
  }
  status_ = "sampling";
  running_ = true;
  const auto period = std::chrono::duration<double>(1.0 / hz);
  thread_ = std::thread([this, library, shutdown, utilization, device, period, rank] {
    const auto start = std::chrono::steady_clock::now();
    while (running_) {
      NvmlUtilization u{};
      if (utilization(device, &u) == 0) {
        const double t = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        std::lock_guard<std::mutex> lock(mutex_);
        samples_.push_back({t, rank, static_cast<double>(u.gpu), static_cast<double>(u.memory)});
      }
      std::this_thread::sleep_for(period);
    }
    shutdown();
    dlclose(library);
  });
}

GpuSampler::~GpuSampler() { stop(); }

std::vector<UtilizationSample> GpuSampler::stop() {
  running_ = false;
  if (thread_.joinable()) thread_.join();
  std::lock_guard<std::mutex> lock(mutex_);
  return samples_;
}

}  // namespace ft
