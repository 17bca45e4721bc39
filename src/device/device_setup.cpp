// Rank placement: GPU = local rank modulo the devices the rank sees, two ranks on one physical device
// only with allow_device_sharing and never with NCCL; CPU threads = cores / local ranks unless
// train.threads says otherwise.
#include "device/device_setup.h"

#include <ATen/Context.h>
#include <ATen/Parallel.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <thread>

#ifdef FUSETRAIN_WITH_CUDA
#include <c10/cuda/CUDAFunctions.h>
#endif

#include "comm/backend.h"
#include "runtime/device_placement.h"
#include "runtime/error.h"
#include "runtime/world.h"
#include "device/visible_devices.h"

namespace ft {
namespace {

at::Device place_on_cpu(const Config& config, const World& world) {
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  const int threads = config.train.threads > 0 ? config.train.threads : std::max(1, cores / world.local_size());
  at::set_num_threads(threads);
  // Inter-op threads can be set once per process, before any parallel work.
  static std::once_flag interop_once;
  std::call_once(interop_once, [] {
    try {
      at::set_num_interop_threads(1);
    } catch (const c10::Error&) {
      // Parallel work already started in this process (a library caller): keep its pool.
    }
  });
  return at::Device(at::kCPU);
}

at::Device place_on_gpu(const Config& config, int index) {
  const bool reproducible = config.distributed.reproducible;
  // cuBLAS sums in a fixed order only with a fixed workspace, which it reads from the environment at start.
  if (reproducible) ::setenv("CUBLAS_WORKSPACE_CONFIG", ":4096:8", /*overwrite=*/0);
#ifdef FUSETRAIN_WITH_CUDA
  c10::cuda::set_device(static_cast<c10::DeviceIndex>(index));
  // The caching allocator exists only once CUDA is initialised, which LibTorch does lazily on the first
  // CUDA tensor: memory statistics asked for before that fail with "Invalid device argument".
  at::globalContext().lazyInitDevice(at::kCUDA);
#endif
  at::set_num_threads(2);
  // Static shapes: let cuDNN time its algorithms once and keep the fastest; distributed.reproducible takes
  // deterministic algorithms instead (and ATen's deterministic kernels), whatever they cost.
  at::globalContext().setBenchmarkCuDNN(!reproducible);
  at::globalContext().setDeterministicCuDNN(reproducible);
  if (reproducible) at::globalContext().setDeterministicAlgorithms(true, /*warn_only=*/false);
  at::globalContext().setUserEnabledCuDNN(config.train.cudnn);
  return at::Device(at::kCUDA, static_cast<c10::DeviceIndex>(index));
}

}  // namespace

bool cuda_available() { return cuda_kernels_built() && visible_devices().count() > 0; }

std::string cuda_unavailable_reason() {
  if (!cuda_kernels_built()) return "this build has no CUDA (nvcc was not found when it was configured)";
  if (visible_devices().count() > 0) return "";
  if (!device_query_failure().empty())
    return cat("the CUDA runtime cannot list the devices (", device_query_failure(), "): check the driver");
  const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
  return visible ? cat("no CUDA device is visible (CUDA_VISIBLE_DEVICES='", visible, "')")
                 : std::string("no CUDA device is visible");
}

bool cuda_wanted(DeviceChoice choice, bool built, bool any_visible) {
  FT_REQUIRE(choice != DeviceChoice::cuda || built,
             "train.device is 'cuda' but this fusetrain was built without CUDA (nvcc was not found when it was "
             "configured): rebuild on a host with the CUDA toolkit (-DFUSETRAIN_CUDA=ON), or use train.device cpu");
  if (choice == DeviceChoice::cpu || !built) return false;
  return choice == DeviceChoice::cuda || any_visible;
}

PlacementRules placement_rules(BackendName backend, bool allow_sharing) {
  PlacementRules rules;
  rules.nccl = backend == BackendName::nccl;
  rules.allow_sharing = allow_sharing;
  rules.nccl_duplicate = nccl_duplicate_rule(nccl_version_code(), std::getenv("NCCL_MULTI_RANK_GPU_ENABLE"));
  return rules;
}

std::vector<DevicePlacement> gpu_placement(DeviceChoice choice, const std::vector<RankDevices>& ranks,
                                           const PlacementRules& rules) {
  const bool any_visible =
      std::any_of(ranks.begin(), ranks.end(), [](const RankDevices& r) { return !r.devices.empty(); });
  if (!cuda_wanted(choice, cuda_kernels_built(), any_visible)) return {};
  return place_on_devices(ranks, rules);
}

at::Device place_rank(const Config& config, const World& world) {
  const DeviceChoice choice = config.train.device;
  // Only a rank that may use CUDA gathers the device reports (a collective).
  if (!cuda_wanted(choice, cuda_kernels_built(), true)) return place_on_cpu(config, world);
  const PlacementRules rules = placement_rules(config.distributed.backend, config.distributed.allow_device_sharing);
  const std::vector<RankDevices> ranks = gather_rank_devices(world, visible_devices());
  std::vector<DevicePlacement> placed;
  try {
    placed = gpu_placement(choice, ranks, rules);
  } catch (const Error& e) {
    throw SharedError(e.what());  // every rank placed the same gathered list: the same refusal
  }
  if (placed.empty()) {
    // train.device auto falls back to the CPU; a driver that failed is worth a word, no device is not.
    if (world.rank() == 0 && !device_query_failure().empty())
      std::printf("warning: train.device auto: %s; training on the CPU\n", cuda_unavailable_reason().c_str());
    return place_on_cpu(config, world);
  }
  const std::string apart = rules.nccl ? nccl_hosts_sharing_a_gpu(ranks, placed) : "";
  if (world.rank() == 0 && !apart.empty()) std::printf("%s\n", apart.c_str());
  return place_on_gpu(config, placed[static_cast<std::size_t>(world.rank())].index);
}

void synchronize(const at::Device& device) {
#ifdef FUSETRAIN_WITH_CUDA
  if (device.is_cuda()) c10::cuda::device_synchronize();
#endif
  (void)device;
}

}  // namespace ft
