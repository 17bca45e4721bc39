// Rank placement rules: GPU = local rank (more local ranks than GPUs only with allow_device_sharing,
// never with NCCL); CPU threads = cores / local ranks unless train.threads says otherwise.
#include "train/device_setup.h"

#include <ATen/Context.h>
#include <ATen/Parallel.h>

#include <algorithm>
#include <mutex>
#include <thread>

#ifdef FUSETRAIN_WITH_CUDA
#include <c10/cuda/CUDAFunctions.h>
#endif

#include "runtime/error.h"
#include "runtime/world.h"

namespace ft {

bool cuda_available() { return at::hasCUDA() && at::getNumGPUs() > 0; }

at::Device place_rank(const Config& config, const World& world) {
  const bool use_cuda =
      config.train.device == DeviceChoice::cuda || (config.train.device == DeviceChoice::automatic && cuda_available());
  if (!use_cuda) {
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
  const int gpus = static_cast<int>(at::getNumGPUs());
  FT_REQUIRE(world.local_size() <= gpus || config.distributed.allow_device_sharing, "node ",
             world.hostname(), " runs ", world.local_size(), " ranks but has ", gpus,
             " GPU(s): start one rank per GPU, or set distributed.allow_device_sharing: true "
             "(with backend mpi or gloo; NCCL cannot share a GPU between ranks)");
  const int index = world.local_rank() % gpus;
#ifdef FUSETRAIN_WITH_CUDA
  c10::cuda::set_device(static_cast<c10::DeviceIndex>(index));
  // The caching allocator exists only once CUDA is initialised, which LibTorch does lazily on the first
  // CUDA tensor: memory statistics asked for before that fail with "Invalid device argument".
  at::globalContext().lazyInitDevice(at::kCUDA);
#endif
  at::set_num_threads(2);
  // Static shapes: let cuDNN time its algorithms once and keep the fastest.
  at::globalContext().setBenchmarkCuDNN(true);
  at::globalContext().setUserEnabledCuDNN(config.train.cudnn);
  return at::Device(at::kCUDA, static_cast<c10::DeviceIndex>(index));
}

void synchronize(const at::Device& device) {
#ifdef FUSETRAIN_WITH_CUDA
  if (device.is_cuda()) c10::cuda::device_synchronize();
#endif
  (void)device;
}

}  // namespace ft
