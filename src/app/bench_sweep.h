// The link sweep of `fusetrain bench allreduce --sweep`: one buffer all-reduced at a series of sizes, the
// medians fitted as a latency alpha and an inverse bandwidth beta of one network level (`fusetrain plan`).
#pragma once

#include <ATen/Device.h>

#include <string>
#include <vector>

#include "config/choices.h"

namespace ft {

class World;
struct BackendOptions;

struct SweepSetting {
  std::vector<double> sizes;  // bytes, each a multiple of 4 (fp32 elements)
  int warmup = 3, iterations = 20;
  std::string level = "auto";  // intra | inter | auto (inter when the ranks span nodes)
  std::string fit_path;        // the link file to add the level to ("" = print only)
  BackendName backend = BackendName::mpi;
  MpiAlgorithm mpi_algorithm = MpiAlgorithm::automatic;
  int beside_compute = 0;  // busy threads per rank while timing (runtime/compute_load.h); 0: an idle machine
};

// "4096,65536,..." or "default" (4 KiB to 16 MiB, each 4 times the one before) as sizes in bytes; throws
// ft::Error naming the option for a size that is not a positive multiple of 4 bytes.
std::vector<double> sweep_sizes(const std::string& text);

// The size from which the backend's all-reduce runs the ring (-1: never, 0: always), as the link model needs it.
double ring_min_bytes(BackendName backend, MpiAlgorithm mpi_algorithm);

// Collective: every size timed (median over iterations of the slowest rank, each iteration from a barrier) through
// the ring where the backend has one, and below the size from which it takes the ring (the mpi backend's `auto`)
// through MPI_Iallreduce too; rank 0 prints the table and the fit and writes the level into setting.fit_path.
// With beside_compute, every rank runs that many busy threads from the first size to the last, and the machine's
// CPU is not counted (the load's would be in it).
void run_link_sweep(const World& world, const BackendOptions& options, const at::Device& device,
                    const SweepSetting& setting);

}  // namespace ft
