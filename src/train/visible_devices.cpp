// The real device list (the CUDA runtime's visible devices, each named by its UUID as nvidia-smi and
// CUDA_VISIBLE_DEVICES write it) and the choice between it and the test stand-in.
#include "train/visible_devices.h"

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#ifdef FUSETRAIN_WITH_CUDA
#include "kernels/cuda_check.h"
#endif

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

std::vector<std::string> cuda_identities() {
  int count = 0;
  const cudaError_t rc = cudaGetDeviceCount(&count);
  // No driver or no device is an answer (zero devices), not a failure.
  if (rc == cudaErrorNoDevice || rc == cudaErrorInsufficientDriver) {
    (void)cudaGetLastError();  // not an error for the next launch check either
    return {};
  }
  FT_CHECK_CUDA(rc);
  std::vector<std::string> ids;
  for (int d = 0; d < count; ++d) {
    cudaDeviceProp prop{};
    FT_CHECK_CUDA(cudaGetDeviceProperties(&prop, d));
    ids.push_back(uuid_text(prop.uuid));
  }
  return ids;
}
#endif

std::unique_ptr<DeviceQuery> make_query() {
  if (const char* listed = std::getenv(kTestGpusVariable))
    return std::make_unique<DeviceList>(listed_devices(listed, std::getenv("CUDA_VISIBLE_DEVICES")));
#ifdef FUSETRAIN_WITH_CUDA
  return std::make_unique<DeviceList>(cuda_identities());
#else
  return std::make_unique<DeviceList>(std::vector<std::string>{});
#endif
}

}  // namespace

const DeviceQuery& visible_devices() {
  static const std::unique_ptr<DeviceQuery> query = make_query();
  return *query;
}

}  // namespace ft
