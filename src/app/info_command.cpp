// `fusetrain info`: what this build contains (backends, CUDA, versions) and what this host offers
// (CPU threads, CUDA devices with their names and memory).
#include <ATen/Context.h>
#include <ATen/Parallel.h>
#include <torch/version.h>

#include <cstdio>
#include <cstring>
#include <thread>

#ifdef FUSETRAIN_WITH_CUDA
#include <cuda_runtime.h>
#endif

#include "app/commands.h"
#include "runtime/version.h"

namespace ft {

int info_command(int argc, char** argv) {
  if (argc > 1 && (!std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "-h"))) {
    std::printf("fusetrain info: print build configuration and the devices of this host\n");
    return 0;
  }
  std::printf("fusetrain %s (commit %s)\n", program_version(), git_commit());
  std::printf("LibTorch %s\n", TORCH_VERSION);
  std::printf("backends: mpi");
#ifdef FUSETRAIN_WITH_GLOO
  std::printf(", gloo");
#endif
#ifdef FUSETRAIN_WITH_NCCL
  std::printf(", nccl");
#endif
  std::printf("\n");
#ifdef FUSETRAIN_WITH_CUDA
  int runtime = 0;
  cudaRuntimeGetVersion(&runtime);
  std::printf("CUDA kernels: built (runtime %d.%d)\n", runtime / 1000, (runtime % 1000) / 10);
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) count = 0;
  std::printf("CUDA devices: %d\n", count);
  for (int d = 0; d < count; ++d) {
    cudaDeviceProp prop{};
    if (cudaGetDeviceProperties(&prop, d) == cudaSuccess)
      std::printf("  %d: %s, %.1f GiB, compute capability %d.%d, %d SMs\n", d, prop.name,
                  prop.totalGlobalMem / 1073741824.0, prop.major, prop.minor, prop.multiProcessorCount);
  }
#else
  std::printf("CUDA kernels: not built\n");
#endif
  std::printf("CPU threads: %u hardware, LibTorch uses %d\n", std::thread::hardware_concurrency(),
              at::get_num_threads());
  return 0;
}

}  // namespace ft
