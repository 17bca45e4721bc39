// MPI collectives: chunks of MPI_Iallreduce / Ibcast / Iallgather in a sliding window, polled with
// MPI_Testsome, yields and growing sleeps until done or the stall timeout names the missing ranks.
#include "comm/mpi_backend.h"

#include <algorithm>
#include <climits>
#include <cstdio>
#include <memory>
#include <utility>

#include "comm/span_staging.h"
#include "comm/stall_inspector.h"
#include "runtime/world.h"

#if defined(OPEN_MPI) && OPEN_MPI
#include <mpi-ext.h>
#endif
#ifdef FUSETRAIN_WITH_CUDA
#include "kernels/host_sync.h"
#endif

namespace ft {
namespace {

constexpr int kRingTag = 0x4652;  // the ring's messages on the backend's own communicator

// Device pointers go to MPI only when the library can reduce them in a *nonblocking* collective.
// Open MPI's CUDA support covers point-to-point and blocking collectives, but MPI_Iallreduce on GPU
// buffers runs the reduction on the host and crashes (open-mpi/ompi#9845, #12045), so with Open MPI
// the engine stages through host memory. MPICH 4 (yaksa) reduces GPU buffers in nonblocking collectives.
bool accepts_device_memory() {
#if defined(FUSETRAIN_WITH_CUDA) && defined(MPICH_NUMVERSION) && MPICH_NUMVERSION >= 40000000 && \
    !(defined(OPEN_MPI) && OPEN_MPI)
  return MPIX_Query_cuda_support() == 1;
#else
  return false;
#endif
}

}  // namespace

MpiBackend::MpiBackend(const World& world, const BackendOptions& options, std::size_t chunk_bytes)
    : Backend(world, "mpi", options.stall_timeout_s),
      chunk_bytes_(std::min<std::size_t>(chunk_bytes, INT_MAX)),
      device_memory_(accepts_device_memory()),
      mpi_algorithm_(options.mpi_algorithm) {
  FT_CHECK(chunk_bytes_ >= 8, "mpi backend: chunks must hold at least one element of every dtype");
  FT_CHECK_MPI(MPI_Comm_dup(world.comm(), &comm_));
  FT_CHECK_MPI(MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN));
}

// A stalled collective cannot be cancelled (MPI forbids freeing or cancelling collective requests), and
// MPI writes into its buffer whenever the missing ranks arrive. So the destructor gives it a short grace
// period to complete, and the owner must keep that buffer alive until the backend is destroyed.
MpiBackend::~MpiBackend() {
  try {
    PollBackoff grace(std::min(inspector().timeout_s(), kAbandonGraceS));
    for (MPI_Request& request : abandoned_) {
      int done = 0;
      for (;;) {
        FT_CHECK_MPI(MPI_Test(&request, &done, MPI_STATUS_IGNORE));
        if (done || grace.expired()) break;
        grace.pause();
      }
      if (!done)
        std::fprintf(stderr, "fusetrain: rank %d: warning: a stalled mpi collective is still pending at shut-down\n",
                     rank_);
    }
    FT_CHECK_MPI(MPI_Comm_free(&comm_));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fusetrain: warning: mpi backend shut-down: %s\n", e.what());
  }
}

void MpiBackend::sync_stream(void* stream) {
#ifdef FUSETRAIN_WITH_CUDA
  if (device_memory_ && stream) ft::sync_stream(static_cast<cudaStream_t>(stream));
#else
  (void)stream;
#endif
}

void MpiBackend::on_failure() noexcept {
  for (auto* requests : {&in_flight_, &ring_.requests}) {
    for (MPI_Request request : *requests)
      if (request != MPI_REQUEST_NULL) abandoned_.push_back(request);
    requests->clear();
  }
}

// Yield while data flows (for kSpin after the start and after each completed chunk); only a peer late
// by more than that makes the wait sleep, so that a rank stuck behind a straggler frees its core.
PollBackoff MpiBackend::start_wait() const { return PollBackoff(inspector().timeout_s(), kSpin); }

void MpiBackend::run_chunks(PollBackoff& wait, std::size_t chunks, const PostChunk& post) {
  run_pipeline(wait, chunks, {post});
}

void MpiBackend::run_pipeline(PollBackoff& wait, std::size_t chunks, const std::vector<PostChunk>& stages) {
  const std::size_t depth = stages.size();
  if (depth == 0 || chunks == 0) return;
  in_flight_.assign(depth * chunks, MPI_REQUEST_NULL);  // request of chunk i in stage s at s * chunks + i
  std::vector<char> complete(depth * chunks, 0);
  std::vector<int> indices(depth * chunks);
  std::vector<std::size_t> posted(depth, 0), finished(depth, 0), active(depth, 0);  // finished: in-order prefix
  while (finished[depth - 1] < chunks) {
    for (std::size_t s = 0; s < depth; ++s) {
      const std::size_t ready = s == 0 ? chunks : finished[s - 1];
      for (; posted[s] < ready && active[s] < kMaxInFlight; ++posted[s], ++active[s])
        stages[s](posted[s], &in_flight_[s * chunks + posted[s]]);
    }
    int count = 0;
    FT_CHECK_MPI(MPI_Testsome(static_cast<int>(in_flight_.size()), in_flight_.data(), &count, indices.data(),
                              MPI_STATUSES_IGNORE));
    if (count > 0 && count != MPI_UNDEFINED) {
      for (int k = 0; k < count; ++k) {
        complete[static_cast<std::size_t>(indices[k])] = 1;
        --active[static_cast<std::size_t>(indices[k]) / chunks];
      }
      for (std::size_t s = 0; s < depth; ++s)
        while (finished[s] < posted[s] && complete[s * chunks + finished[s]]) ++finished[s];
      wait.progressed();
      continue;
    }
    if (wait.expired()) throw inspector().stall_error(wait.elapsed_s());
    wait.pause();
  }
  in_flight_.clear();
}

std::vector<std::pair<char*, int>> MpiBackend::split_regions(const std::vector<SpanRegion>& regions,
                                                             std::size_t element) const {
  const std::size_t per_chunk = chunk_bytes_ / element;
  std::vector<std::pair<char*, int>> chunks;
  for (const SpanRegion& region : regions)
    for (std::size_t offset = 0; offset < region.count; offset += per_chunk)
      chunks.emplace_back(region.data + offset * element, static_cast<int>(std::min(per_chunk, region.count - offset)));
  return chunks;
}

void MpiBackend::run_region_chunks(PollBackoff& wait, const std::vector<SpanRegion>& regions, std::size_t element,
                                   const PostRegionChunk& post) {
  const auto chunks = split_regions(regions, element);
  run_chunks(wait, chunks.size(), [&](std::size_t index, MPI_Request* request) {
    post(chunks[index].first, chunks[index].second, request);
  });
}

bool MpiBackend::use_ring(std::size_t bytes) const {
  if (on_device_now_) return false;
  return mpi_algorithm_ == MpiAlgorithm::ring || (mpi_algorithm_ == MpiAlgorithm::automatic && bytes >= kRingMinBytes);
}

// Eager-sized segments (kRingSegmentBytes, or the tests' smaller chunk_bytes_), kRingWindow of them in
// flight each way.
void MpiBackend::ring_regions(PollBackoff& wait, MPI_Comm comm, const std::vector<SpanRegion>& regions,
                              DType dtype) {
  const MpiRingOptions options{std::min(chunk_bytes_, kRingSegmentBytes), kRingWindow, kRingTag};
  mpi_ring_allreduce(comm, regions, dtype_size(dtype), sums_[dtype], options, ring_, [&](bool progressed) {
    if (progressed) return wait.progressed();
    if (wait.expired()) throw inspector().stall_error(wait.elapsed_s());
    wait.pause();
  });
}

void MpiBackend::reduce_regions(const std::vector<SpanRegion>& regions, DType dtype) {
  const MpiSum sum = sums_[dtype];
  PollBackoff wait = start_wait();
  if (use_ring(total_count(regions) * dtype_size(dtype))) return ring_regions(wait, comm_, regions, dtype);
  run_region_chunks(wait, regions, dtype_size(dtype), [&](char* data, int count, MPI_Request* request) {
    FT_CHECK_MPI(MPI_Iallreduce(MPI_IN_PLACE, data, count, sum.type, sum.op, comm_, request));
  });
}

// Device memory (a CUDA-aware library, a stream given) goes to MPI only where the library itself sums it:
// MPI_SUM on a built-in type, chunk by chunk; fp16 and bf16, whose operators run on the host, go through a
// host copy, and the ring (which sums on the host) is not used.
void MpiBackend::transfer_allreduce(void* data, std::size_t count, DType dtype, void* stream) {
  sync_stream(stream);
  const bool on_device = device_memory_ && stream != nullptr;
  if (on_device && !mpi_sums_natively(dtype)) return reduce_through_host(data, count, dtype);
  on_device_now_ = on_device;
  try {
    reduce_regions({{static_cast<char*>(data), count}}, dtype);
  } catch (...) {
    on_device_now_ = false;
    throw;
  }
  on_device_now_ = false;
}

void MpiBackend::reduce_through_host(void* data, std::size_t count, DType dtype) {
#ifdef FUSETRAIN_WITH_CUDA
  const std::size_t bytes = count * dtype_size(dtype);
  if (host_copy_.size() < bytes) host_copy_.resize(bytes);  // the backend's: a stalled chunk may still write
  copy_blocking(host_copy_.data(), data, bytes, cudaMemcpyDeviceToHost);
  reduce_regions({{host_copy_.data(), count}}, dtype);
  copy_blocking(data, host_copy_.data(), bytes, cudaMemcpyHostToDevice);
#else
  (void)data, (void)count, (void)dtype;
  FT_CHECK(false, "mpi backend: device memory in a build without CUDA");
#endif
}

void MpiBackend::transfer_allreduce_spans(const std::vector<HostSpan>& spans, DType dtype) {
  auto staging = std::make_unique<SpanStaging>(spans, dtype_size(dtype), kSmallSpanBytes);
  staging->gather();
  try {
    reduce_regions(staging->regions(), dtype);
  } catch (...) {
    abandoned_staging_.push_back(std::move(staging));  // a stalled chunk may still write into it
    throw;
  }
  staging->scatter();
}

void MpiBackend::transfer_broadcast(void* data, std::size_t bytes, int root, void* stream) {
  sync_stream(stream);
  PollBackoff wait = start_wait();
  run_region_chunks(wait, {{static_cast<char*>(data), bytes}}, 1, [&](char* chunk, int n, MPI_Request* request) {
    FT_CHECK_MPI(MPI_Ibcast(chunk, n, MPI_BYTE, root, comm_, request));
  });
}

void MpiBackend::transfer_allgather(const void* in, void* out, std::size_t bytes, void* stream) {
  sync_stream(stream);
  auto* out_bytes = static_cast<char*>(out);
  const auto* in_bytes = static_cast<const char*>(in);
  const bool in_place = in_bytes == out_bytes + static_cast<std::size_t>(rank_) * bytes;
  PollBackoff wait = start_wait();
  run_chunks(wait, (bytes + chunk_bytes_ - 1) / chunk_bytes_, [&](std::size_t index, MPI_Request* request) {
    const std::size_t offset = index * chunk_bytes_;
    post_allgather_chunk(in_bytes, out_bytes, offset, std::min(chunk_bytes_, bytes - offset), bytes, in_place,
                         request);
  });
}

// One chunk [offset, offset + n) of every rank's block. The receive type is n bytes resized to an
// extent of the whole block, so rank r's chunk lands at out + r * bytes + offset.
void MpiBackend::post_allgather_chunk(const char* in, char* out, std::size_t offset, std::size_t n,
                                      std::size_t bytes, bool in_place, MPI_Request* request) {
  const void* send = in_place ? MPI_IN_PLACE : static_cast<const void*>(in + offset);
  const int count = static_cast<int>(n);
  if (n == bytes) {
    FT_CHECK_MPI(MPI_Iallgather(send, count, MPI_BYTE, out, count, MPI_BYTE, comm_, request));
    return;
  }
  MPI_Datatype chunk, block;
  FT_CHECK_MPI(MPI_Type_contiguous(count, MPI_BYTE, &chunk));
  FT_CHECK_MPI(MPI_Type_create_resized(chunk, 0, static_cast<MPI_Aint>(bytes), &block));
  FT_CHECK_MPI(MPI_Type_commit(&block));
  FT_CHECK_MPI(MPI_Type_free(&chunk));
  FT_CHECK_MPI(MPI_Iallgather(send, count, MPI_BYTE, out + offset, 1, block, comm_, request));
  FT_CHECK_MPI(MPI_Type_free(&block));  // MPI keeps it alive until the operation completes
}

void MpiBackend::transfer_barrier() {
  PollBackoff wait = start_wait();
  run_chunks(wait, 1, [&](std::size_t, MPI_Request* request) { FT_CHECK_MPI(MPI_Ibarrier(comm_, request)); });
}

}  // namespace ft
