// `fusetrain info`: what this build contains (backends, CUDA, versions) and what this host offers
// (CPU threads, CUDA devices with their names and memory); `--placement`, run under the launcher, shows
// the device every rank would train on, decided as training decides it.
#include <ATen/Context.h>
#include <ATen/Parallel.h>
#include <boost/program_options.hpp>
#include <torch/version.h>

#include <cstdio>
#include <iostream>
#include <thread>

#ifdef FUSETRAIN_WITH_CUDA
#include <cuda_runtime.h>
#endif

#include "app/command_line.h"
#include "app/commands.h"
#include "app/error_text.h"
#include "config/choices.h"
#include "runtime/device_placement.h"
#include "runtime/heap_policy.h"
#include "runtime/version.h"
#include "runtime/world.h"
#include "device/cpu_capabilities.h"
#include "device/device_setup.h"
#include "device/visible_devices.h"

namespace po = boost::program_options;

namespace ft {
namespace {

void print_cuda_devices() {
#ifdef FUSETRAIN_WITH_CUDA
  int runtime = 0;
  cudaRuntimeGetVersion(&runtime);
  std::printf("CUDA kernels: built (runtime %d.%d)\n", runtime / 1000, (runtime % 1000) / 10);
  const DeviceQuery& devices = visible_devices();
  std::printf("CUDA devices: %d\n", devices.count());
  for (int d = 0; d < devices.count(); ++d) {
    cudaDeviceProp prop{};
    if (cudaGetDeviceProperties(&prop, d) == cudaSuccess)
      std::printf("  %d: %s, %.1f GiB, compute capability %d.%d, %d SMs, %s, PCI bus %s\n", d, prop.name,
                  prop.totalGlobalMem / 1073741824.0, prop.major, prop.minor, prop.multiProcessorCount,
                  devices.identity(d).c_str(), devices.device(d).bus_id.c_str());
  }
#else
  std::printf("CUDA kernels: not built\n");
#endif
  const std::string reason = cuda_unavailable_reason();
  std::printf("training device (train.device auto): %s\n", reason.empty() ? "cuda" : ("cpu: " + reason).c_str());
}

void print_build() {
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
  print_cuda_devices();
  std::printf("CPU threads: %u hardware, LibTorch uses %d\n", std::thread::hardware_concurrency(),
              at::get_num_threads());
  const HostCpu cpu = host_cpu();
  std::printf("CPU: %s; bf16 unit: %s%s\n", cpu.name.empty() ? "unknown" : cpu.name.c_str(),
              describe(cpu.bf16).c_str(), cpu.max_isa.empty() ? "" : (" under ONEDNN_MAX_CPU_ISA=" + cpu.max_isa).c_str());
  std::printf("host heap: %s\n", heap_policy_description().c_str());
}

// Rank 0 prints one line per rank: its node, local rank, CUDA_VISIBLE_DEVICES and device.
void print_placement(const World& world, const PlacementRules& rules) {
  const std::vector<RankDevices> ranks = gather_rank_devices(world, visible_devices());
  const std::vector<DevicePlacement> placed = gpu_placement(DeviceChoice::automatic, ranks, rules);
  const bool gpu = !placed.empty();
  if (world.rank() != 0) return;
  std::printf("placement of %d rank(s) on %d node(s), backend %s, device sharing %s\n", world.size(),
              world.node_count(), rules.nccl ? "nccl" : "mpi/gloo", rules.allow_sharing ? "allowed" : "refused");
  const std::string apart = gpu && rules.nccl ? nccl_hosts_sharing_a_gpu(ranks, placed) : "";
  if (!apart.empty()) std::printf("%s\n", apart.c_str());
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    const RankDevices& rank = ranks[r];
    const std::string visible = rank.visible_set ? "'" + rank.visible_setting + "'" : "unset";
    const std::string device =
        gpu ? cat("cuda:", placed[r].index, " of ", placed[r].visible, " visible, ", placed[r].identity)
            : cat("cpu (", cuda_kernels_built() ? "no rank sees a CUDA device" : cuda_unavailable_reason(), ")");
    std::printf("rank %zu: node %s, local rank %d, CUDA_VISIBLE_DEVICES %s: %s\n", r, rank.host.c_str(),
                rank.local_rank, visible.c_str(), device.c_str());
  }
  std::fflush(stdout);
}

int placement_command(int argc, char** argv, const po::variables_map& vm) {
  World world(&argc, &argv);
  try {
    print_placement(world, placement_rules(choice_from<BackendName>("--backend", vm["backend"].as<std::string>()),
                                           vm.count("allow-device-sharing") > 0));
  } catch (const std::exception& e) {
    // Every rank decides from the same reports and fails the same way: one message is enough.
    return world.rank() == 0 ? report_error("fusetrain info", e) : 1;
  }
  return 0;
}

}  // namespace

int info_command(int argc, char** argv) {
  po::options_description options("fusetrain info: print build configuration and the devices of this host\n\n"
                                  "usage: fusetrain info | [srun|mpirun ...] fusetrain info --placement\n\n"
                                  "options");
  options.add_options()
      ("placement", "under the launcher: the device each rank would train on (train.device auto)")
      ("backend", po::value<std::string>()->default_value("mpi"), "with --placement: mpi | gloo | nccl")
      ("allow-device-sharing", "with --placement: as distributed.allow_device_sharing: true")
      ("help,h", "show this help");
  po::variables_map vm;
  if (!parse_command_line(options, argc, argv, vm, "fusetrain info")) return 2;
  if (vm.count("help")) return std::cout << options, 0;
  if (vm.count("placement")) return placement_command(argc, argv, vm);
  print_build();
  return 0;
}

}  // namespace ft
