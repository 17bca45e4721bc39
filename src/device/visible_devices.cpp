// The real device list (the CUDA runtime's visible devices, each named by its UUID as nvidia-smi and
// CUDA_VISIBLE_DEVICES write it) and the choice between it and the test stand-in.
#include "device/visible_devices.h"

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#ifdef FUSETRAIN_WITH_CUDA
#include "kernels/cuda_check.h"
#endif
#include "runtime/error.h"

namespace ft {
namespace {

#ifdef FUSETRAIN_WITH_CUDA
// "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx", the form CUDA_VISIBLE_DEVICES and nvidia-smi use.
std::string uuid_text(const cudaUUID_t& uuid) {
  std::string text = "GPU-";
  for (int i = 0; i < 16; ++i) {
    char hex[3];
    std::snprintf(hex, sizeof(hex), "%02x", static_cast<unsigned char>(uuid.bytes[i]));
    text += hex;
    if (i == 3 || i == 5 || i == 7 || i == 9) text += '-';
  }
  return text;
}

// No driver or no device is an answer (zero devices); any other error of the runtime (a driver that does
// not match it, a device in a bad state) is recorded in `failure` and also leaves no device to use.
std::vector<VisibleDevice> cuda_devices(std::string& failure) {
  int count = 0;
  const cudaError_t rc = cudaGetDeviceCount(&count);
  if (rc != cudaSuccess) {
    (void)cudaGetLastError();  // not an error for the next launch check either
    if (rc != cudaErrorNoDevice && rc != cudaErrorInsufficientDriver)
      failure = cat("cudaGetDeviceCount: ", cudaGetErrorName(rc), ": ", cudaGetErrorString(rc));
    return {};
  }
  std::vector<VisibleDevice> devices;
  for (int d = 0; d < count; ++d) {
    cudaDeviceProp prop{};
    FT_CHECK_CUDA(cudaGetDeviceProperties(&prop, d));
    // NCCL tells devices apart by this bus id; where the runtime gives none, the device's own identity stands in.
    const std::string bus = cuda_pci_bus_id(d);
    devices.push_back({uuid_text(prop.uuid), bus.empty() ? uuid_text(prop.uuid) : bus});
  }
  return devices;
}
#endif

struct Query {
  std::unique_ptr<DeviceQuery> devices;
  std::string failure;
};

Query make_query() {
  Query q;
  if (const char* failure = std::getenv(kTestCudaFailureVariable)) {
    q.devices = std::make_unique<DeviceList>(std::vector<VisibleDevice>{});
    q.failure = failure;
    return q;
  }
  if (const char* listed = std::getenv(kTestGpusVariable)) {
    q.devices = std::make_unique<DeviceList>(listed_devices(listed, std::getenv("CUDA_VISIBLE_DEVICES")));
    return q;
  }
#ifdef FUSETRAIN_WITH_CUDA
  q.devices = std::make_unique<DeviceList>(cuda_devices(q.failure));
#else
  q.devices = std::make_unique<DeviceList>(std::vector<VisibleDevice>{});
#endif
  return q;
}

const Query& query() {
  static const Query asked = make_query();
  return asked;
}

}  // namespace

const DeviceQuery& visible_devices() { return *query().devices; }

const std::string& device_query_failure() { return query().failure; }

}  // namespace ft
