// What every backend's collectives share (failure recording, the stall-inspector bracket, argument
// checks), and the factory that picks a backend by name, saying plainly when the one asked for was not
// compiled into this binary and how to get it.
#include "comm/backend.h"

#include <cstdint>
#include <cstdio>
#include <exception>
#include <utility>
#include <vector>

#include "comm/mpi_backend.h"
#include "comm/mpi_hierarchical.h"
#include "comm/span_staging.h"
#include "comm/stall_inspector.h"
#include "runtime/collective_timing.h"
#include "runtime/world.h"
#ifdef FUSETRAIN_WITH_GLOO
#include "comm/gloo/gloo_backend.h"
#endif
#ifdef FUSETRAIN_WITH_NCCL
#include "comm/nccl/nccl_backend.h"
#include "comm/nccl/nccl_check.h"
#endif

namespace ft {

Backend::Backend(const World& world, std::string name, double stall_timeout_s)
    : rank_(world.rank()),
      size_(world.size()),
      name_(std::move(name)),
      inspector_(std::make_unique<StallInspector>(world, name_, stall_timeout_s)) {}

Backend::~Backend() = default;

CollectiveWatch* Backend::watch() { return inspector_.get(); }

template <typename Work>
void Backend::recording_failure(Work&& work) {
  {
    std::lock_guard<std::mutex> lock(failure_mutex_);
    FT_REQUIRE(failure_.empty(), "the ", name_, " backend is unusable after an earlier failure: ", failure_);
  }
  try {
    work();
  } catch (const std::exception& e) {
    {
      std::lock_guard<std::mutex> lock(failure_mutex_);
      if (failure_.empty()) failure_ = e.what();
    }
    on_failure();
    throw;
  }
}

template <typename Transfer>
void Backend::guarded(const char* kind, std::size_t bytes, Transfer&& transfer) {
  recording_failure([&] {
    inspector_->begin(kind, bytes);
    if (planted_) raise_transport_failure(*std::exchange(planted_, nullptr));
    transfer();
  });
  inspector_->end();
}

void Backend::plant_transport_failure(TransportFailure failure) {
  planted_ = std::make_unique<TransportFailure>(std::move(failure));
}

void Backend::raise_transport_failure(const TransportFailure& failure) const {
  if (failure.peer_lost) throw inspector_->peer_lost_error(failure.what);
  throw_error(__FILE__, __LINE__, cat(inspector_->current(), " failed: ", failure.what, "; ", inspector_->diagnose()));
}

void Backend::poll_in_flight() {
  recording_failure([&] { transfer_in_flight(kPollOnly); });
}

void Backend::wait_in_flight(std::size_t keep) {
  recording_failure([&] { transfer_in_flight(keep); });
}

void Backend::allreduce(void* data, std::size_t count, DType dtype, void* stream) {
  guarded("all-reduce", count * dtype_size(dtype), [&] {
    if (count > 0) transfer_allreduce(data, count, dtype, stream);
  });
}

void Backend::allreduce_spans(const std::vector<HostSpan>& spans, DType dtype) {
  std::size_t total = 0;
  for (const HostSpan& span : spans) total += span.count;
  guarded("all-reduce", total * dtype_size(dtype), [&] {
    if (total > 0) transfer_allreduce_spans(spans, dtype);
  });
}

void Backend::broadcast(void* data, std::size_t bytes, int root, void* stream) {
  FT_REQUIRE(root >= 0 && root < size_, "broadcast root ", root, " is not a rank of a world of ", size_);
  guarded("broadcast", bytes, [&] {
    if (bytes > 0) transfer_broadcast(data, bytes, root, stream);
  });
}

void Backend::allgather(const void* in, void* out, std::size_t bytes, void* stream) {
  guarded("all-gather", bytes * static_cast<std::size_t>(size_), [&] {
    if (bytes > 0) transfer_allgather(in, out, bytes, stream);
  });
}

void Backend::barrier() {
  guarded("barrier", 0, [&] { transfer_barrier(); });
}

void Backend::transfer_allreduce_spans(const std::vector<HostSpan>& spans, DType dtype) {
  std::size_t non_empty = 0;
  for (const HostSpan& span : spans) non_empty += span.count > 0;
  if (non_empty == 1) {
    for (const HostSpan& span : spans)
      if (span.count > 0) transfer_allreduce(span.data, span.count, dtype, nullptr);
    return;
  }
  SpanStaging staging(spans, dtype_size(dtype), SIZE_MAX);
  staging.gather();
  transfer_allreduce(staging.regions().front().data, staging.total_count(), dtype, nullptr);
  staging.scatter();
}

namespace {

// Median seconds of `backend`'s all-reduce of `buffer` (3 after one untimed), the maximum over ranks.
double time_allreduce(const World& world, Backend& backend, std::vector<float>& buffer) {
  return median_over_ranks_s(world, 1, 3, [&] {
    backend.allreduce(buffer.data(), buffer.size(), DType::kFloat32, nullptr);
  });
}

// The faster of the two on a gradient-sized buffer (16 MiB), the same choice on every rank: times are
// maxima over ranks, and the hierarchy must win outright. Rank 0 says which it took and why.
std::unique_ptr<Backend> faster_mpi_backend(const World& world, std::unique_ptr<Backend> flat,
                                            std::unique_ptr<Backend> tiered) {
  std::vector<float> buffer(std::size_t{4} << 20, 0.0f);
  const double flat_s = time_allreduce(world, *flat, buffer);
  const double tiered_s = time_allreduce(world, *tiered, buffer);
  const bool hierarchical = tiered_s < flat_s;
  if (world.rank() == 0)
    std::printf("all-reduce: %s (16 MiB: flat %.1f ms, hierarchical %.1f ms)\n", hierarchical ? "hierarchical" : "flat",
                flat_s * 1e3, tiered_s * 1e3);
  return hierarchical ? std::move(tiered) : std::move(flat);
}

// The MPI backend: flat, hierarchical, or on auto, where the world spans several nodes and some node
// runs several ranks (one rank per node leaves nothing to reduce inside nodes), whichever is faster here.
std::unique_ptr<Backend> make_mpi_backend(const World& world, const BackendOptions& options) {
  if (options.allreduce == AllreduceAlgorithm::flat) return std::make_unique<MpiBackend>(world, options);
  auto nodes = std::make_unique<NodeComms>(world.comm(), NodeGrouping::from_environment());
  const bool several = nodes->node_count() > 1 && nodes->node_count() < world.size();
  if (options.allreduce == AllreduceAlgorithm::automatic && !several)
    return std::make_unique<MpiBackend>(world, options);
  auto tiered = std::make_unique<HierarchicalMpiBackend>(world, options, std::move(nodes));
  if (options.allreduce == AllreduceAlgorithm::hierarchical) return tiered;
  return faster_mpi_backend(world, std::make_unique<MpiBackend>(world, options), std::move(tiered));
}

}  // namespace

TransportFailure nccl_transport_failure(int nccl_result) {
#ifdef FUSETRAIN_WITH_NCCL
  return nccl_async_failure(static_cast<ncclResult_t>(nccl_result), nullptr);
#else
  throw Error(cat("NCCL result ", nccl_result, ": this fusetrain is built without NCCL"));
#endif
}

int nccl_version_code() {
#ifdef FUSETRAIN_WITH_NCCL
  return nccl_runtime_version();
#else
  return 0;
#endif
}

std::unique_ptr<Backend> make_backend(const World& world, const BackendOptions& options) {
  FT_REQUIRE(options.allreduce != AllreduceAlgorithm::hierarchical || options.name == BackendName::mpi,
             "the hierarchical all-reduce is built on MPI only; use distributed.backend mpi or "
             "distributed.allreduce flat/auto with ", options.name);
  FT_REQUIRE(options.stall_timeout_s > 0, "the stall timeout must be positive seconds, got ",
             options.stall_timeout_s);
  switch (options.name) {
    case BackendName::mpi: return make_mpi_backend(world, options);
    case BackendName::gloo:
#ifdef FUSETRAIN_WITH_GLOO
      return std::make_unique<GlooBackend>(world, options);
#else
      throw Error("backend 'gloo' is not built into this fusetrain (rebuild with libgloo-dev)");
#endif
    case BackendName::nccl:
#ifdef FUSETRAIN_WITH_NCCL
      return std::make_unique<NcclBackend>(world, options);
#else
      throw Error("backend 'nccl' is not built into this fusetrain (rebuild on a host with the CUDA toolkit "
                  "and NCCL: nvcc, nccl.h and libnccl)");
#endif
  }
  throw Error(cat("unknown communication backend ", static_cast<int>(options.name)));
}

}  // namespace ft
