// The link sweep: a buffer per size, all-reduced as a bucket is (through the bucket device sync, so GPU
// buffers go to NCCL as device pointers and host ones to MPI or Gloo in place), then the fit and its file.
#include "app/bench_sweep.h"

#include <cstdio>
#include <ctime>
#include <sstream>

#include "comm/backend.h"
#include "comm/mpi_backend.h"
#include "device/device_setup.h"
#include "engine/engine_device.h"
#include "io/atomic_file.h"
#include "plan/link_fit.h"
#include "plan/plan_files.h"
#include "runtime/collective_timing.h"
#include "runtime/compute_load.h"
#include "runtime/error.h"
#include "runtime/machine_cpu.h"
#include "runtime/world.h"

namespace ft {
namespace {

// One all-reduce of `buffer` as a bucket's, waited for.
void allreduce_once(Backend& backend, BucketDeviceSync& sync, at::Tensor& buffer, const at::Device& device) {
  sync.mark_packed(0);
  sync.run(0, [&] { sync.allreduce(backend, buffer, DType::kFloat32); });
  sync.wait_all(1);
  synchronize(device);
}

// One size's sample: the slowest rank's median time for one all-reduce of `bytes` (each after a barrier), then
// the machine's busy CPU per all-reduce as rank 0 counts it over `iterations` more, back to back (the timing's
// closing all-reduce of the median has brought the ranks together): not over the timing's barriers, whose MPI
// waits poll. What else the machine runs meanwhile counts too; beside a compute load, nothing is counted.
SweepSample measure_sample(const World& world, Backend& backend, const at::Device& device, double bytes,
                           const SweepSetting& s, bool ring) {
  auto buffer = at::ones({static_cast<std::int64_t>(bytes / 4)}, at::TensorOptions().device(device));
  const auto sync = make_bucket_device_sync(device.is_cuda(), 1);
  SweepSample sample{bytes, median_over_ranks_s(world, s.warmup, s.iterations,
                                                [&] { allreduce_once(backend, *sync, buffer, device); }),
                     ring};
  if (s.beside_compute > 0) return sample;
  const double before = machine_busy_cpu_s();
  for (int i = 0; i < s.iterations; ++i) allreduce_once(backend, *sync, buffer, device);
  const double after = machine_busy_cpu_s();
  if (before >= 0 && after >= 0) sample.cpu_s = (after - before) / s.iterations;
  return sample;
}

std::string utc_now() {
  const std::time_t now = std::time(nullptr);
  char text[32];
  std::strftime(text, sizeof(text), "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  return text;
}

double fitted_s(const LinkLevel& fit, int ranks, const SweepSample& s) {
  return s.ring ? ring_allreduce_s(ranks, s.bytes, fit) : doubling_allreduce_s(ranks, s.bytes, fit);
}

void print_sweep(const LinkLevelRecord& r, int iterations) {
  const double bus = 2.0 * (r.ranks - 1) / r.ranks;
  std::printf("all-reduce sweep, level %s: %d ranks on %d node(s), backend %s, the slowest rank's median of %d "
              "iterations%s\n\n| bytes | algorithm | time_ms | fit_ms | busbw_GB_s |\n|---|---|---|---|---|\n",
              r.level.c_str(), r.ranks, r.nodes, r.backend.c_str(), iterations,
              r.beside_compute > 0 ? cat(", beside ", r.beside_compute, " busy thread(s) per rank").c_str() : "");
  for (const auto& s : r.samples)
    std::printf("| %.0f | %s | %.3f | %.3f | %.3f |\n", s.bytes, s.ring ? "ring" : "doubling", s.seconds * 1e3,
                fitted_s(r.fit, r.ranks, s) * 1e3, bus * s.bytes / s.seconds / 1e9);
  std::printf("\nfit: alpha = %.2f us (below the ring's size %.2f us), beta = %.4f ns/byte (%.3f Gbit/s)\n",
              r.fit.alpha_s * 1e6, r.fit.doubling_alpha_s() * 1e6, r.fit.beta_s_per_byte * 1e9,
              8e-9 / r.fit.beta_s_per_byte);
  if (r.fit.cpu_known())
    std::printf("machine CPU: %.4f ns per byte a rank sends, on %d cores (what --one-machine charges when the ranks "
                "share this machine)\n", r.fit.cpu_s_per_byte * 1e9, r.fit.cpu_cores);
}

}  // namespace

std::vector<double> sweep_sizes(const std::string& text) {
  std::vector<double> sizes;
  if (text == "default") {
    for (double bytes = 4096; bytes <= 16 << 20; bytes *= 4) sizes.push_back(bytes);
    return sizes;
  }
  std::stringstream list(text);
  for (std::string item; std::getline(list, item, ',');) {
    char* end = nullptr;
    const double bytes = std::strtod(item.c_str(), &end);
    FT_REQUIRE(end != item.c_str() && *end == '\0' && bytes >= 4 && static_cast<std::int64_t>(bytes) % 4 == 0,
               "--sweep-bytes: '", item, "' is not a positive multiple of 4 bytes");
    sizes.push_back(bytes);
  }
  FT_REQUIRE(sizes.size() >= 2, "--sweep-bytes needs at least 2 sizes to fit alpha and beta, got '", text, "'");
  return sizes;
}

double ring_min_bytes(BackendName backend, MpiAlgorithm mpi_algorithm) {
  if (backend != BackendName::mpi) return 0;
  if (mpi_algorithm == MpiAlgorithm::ring) return 0;
  if (mpi_algorithm == MpiAlgorithm::native) return -1;
  return static_cast<double>(MpiBackend::kRingMinBytes);
}

void run_link_sweep(const World& world, const BackendOptions& options, const at::Device& device,
                    const SweepSetting& s) {
  const int nodes = world.node_count();
  LinkLevelRecord record;
  record.level = s.level == "auto" ? (nodes > 1 ? "inter" : "intra") : s.level;
  FT_REQUIRE(record.level == "intra" || record.level == "inter", "--level must be intra, inter or auto, not '",
             s.level, "'");
  FT_REQUIRE(record.level == "inter" || nodes == 1, "--level intra measures the link inside a node, but the ",
             world.size(), " ranks span ", nodes, " nodes");
  FT_REQUIRE(record.level == "intra" || nodes > 1, "--level inter measures the link between nodes, but every rank ",
             "runs on one node: start them on several (mpirun --host a,b)");
  FT_REQUIRE(world.size() >= 2, "a link sweep needs at least 2 ranks (mpirun -np 2)");
  record.ranks = world.size();
  record.nodes = nodes;
  record.backend = choice_name(s.backend);
  record.measured_at = world.broadcast(utc_now());
  record.beside_compute = s.beside_compute;
  const ComputeLoad load(s.beside_compute);
  // Every size round the ring, where the backend runs one; below the ring's size, also as the backend's own
  // all-reduce runs it there (MPI_Iallreduce), each algorithm's latency shows where its sizes are small.
  const double ring_from = ring_min_bytes(s.backend, s.mpi_algorithm);
  BackendOptions ring_options = options;
  if (options.name == BackendName::mpi && ring_from != 0) ring_options.mpi_algorithm = MpiAlgorithm::ring;
  BackendOptions doubling_options = options;
  doubling_options.mpi_algorithm = MpiAlgorithm::native;
  if (ring_from >= 0) {
    auto ring = make_backend(world, ring_options);
    for (const double bytes : s.sizes) record.samples.push_back(measure_sample(world, *ring, device, bytes, s, true));
  }
  if (ring_from != 0) {
    auto doubling = make_backend(world, doubling_options);
    for (const double bytes : s.sizes)
      if (ring_from < 0 || bytes < ring_from)
        record.samples.push_back(measure_sample(world, *doubling, device, bytes, s, false));
  }
  if (world.rank() != 0) return;
  record.fit = fit_level(record.samples, record.ranks, machine_cores());
  print_sweep(record, s.iterations);
  if (load.threads() > 0)
    std::printf("beside compute: rank 0's %d busy thread(s) made %lld passes over their buffers meanwhile\n",
                load.threads(), static_cast<long long>(load.passes()));
  if (!s.fit_path.empty()) {
    write_file_atomically(s.fit_path, link_json(merge_link_level(s.fit_path, record, ring_from)));
    std::printf("link file: %s (level %s)\n", s.fit_path.c_str(), record.level.c_str());
  }
  std::fflush(stdout);
}

}  // namespace ft
