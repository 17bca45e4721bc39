// The MPI backend: nonblocking MPI collectives on a private communicator, pipelined in chunks and polled
// to a deadline, so that a missing rank becomes a StallError naming it instead of a hang.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "comm/backend.h"
#include "comm/mpi_ring.h"
#include "comm/mpi_sum_types.h"
#include "runtime/mpi_check.h"
#include "runtime/poll_backoff.h"

namespace ft {

class SpanStaging;
struct SpanRegion;

// Collectives may be called from one thread (the engine's communication thread) while the main thread
// uses the world communicator: this backend works on its own duplicate of it.
//
// A large buffer is split into chunks of `chunk_bytes` (1 MiB, so counts never approach INT_MAX), up
// to 3 of them in flight at once, as separate nonblocking collectives that every rank posts in the
// same order. Chunks pipeline (one is reduced while the next moves) and stay cache-sized, and each
// completed chunk tells the polling loop that data is flowing, so it keeps yielding rather than
// sleeping (only a peer late by over a second, kSpin, makes it back off). On 2 shared-memory ranks a 45 MB float32 all-reduce takes 0.2-0.3x the time of one
// MPI_Allreduce of the whole buffer (tests/mpi/bench_test.cpp; 4 MiB x 8 in flight was 2x slower).
// After a failure or stall the backend refuses further work, repeating the first error; the buffer of
// the stalled collective must outlive the backend, whose destructor waits up to 5 s for it to finish.
//
// All-reduces of at least kRingMinBytes (or all, or none: BackendOptions::mpi_algorithm) run as a ring of
// point-to-point messages instead (comm/mpi_ring.h), under the same deadline: Open MPI's MPI_Iallreduce
// moves a large buffer mostly one way at a time, the ring uses both directions of every link at once.
class MpiBackend : public Backend {
 public:
  static constexpr std::size_t kChunkBytes = std::size_t{1} << 20;
  static constexpr std::size_t kMaxInFlight = 3;
  // Yield-only polling for up to this long after the start and after each completed chunk, then sleeps.
  // A chunk needs many progress calls (each MPI_Testsome moves some fragments, and over TCP each socket
  // read), so sleeping while data flows starves it: with a 500 us window a ResNet-18 all-reduce between
  // two namespace nodes on 10 Gbit/s links took 584 ms (hierarchical: 3969 ms), yield-only 112 (97) ms.
  static constexpr std::chrono::microseconds kSpin{1000000};
  static constexpr double kAbandonGraceS = 5;
  // On auto, buckets from this size on take the ring; smaller ones, whose 2(N-1) dependent steps cost
  // more in latency than they save in bandwidth, take MPI_Iallreduce.
  static constexpr std::size_t kRingMinBytes = std::size_t{1} << 20;
  // The ring's messages fit Open MPI's TCP eager limit (64 KiB with headers), so none waits for a
  // rendezvous reply: on 2 ranks that reply travels behind the data flowing the other way, and 1 MiB
  // messages made a ResNet-18 all-reduce between two 1 Gbit/s nodes 1.78x the link bound (665 ms against
  // 374 ms with these). 48 in flight each way keep 3 MiB moving, as 3 x 1 MiB did; on shared memory
  // either size takes the same time.
  static constexpr std::size_t kRingSegmentBytes = 64000;
  static constexpr std::size_t kRingWindow = 48;

  // Collective over world. Tests pass a small `chunk_bytes` to exercise chunk boundaries.
  MpiBackend(const World& world, const BackendOptions& options, std::size_t chunk_bytes = kChunkBytes);
  ~MpiBackend() override;
  MpiBackend(const MpiBackend&) = delete;
  MpiBackend& operator=(const MpiBackend&) = delete;

  bool uses_device_memory() const override { return device_memory_; }
  // Chunks of the spans are reduced where they lie; spans under kSmallSpanBytes travel staged together.
  bool reduces_spans_in_place() const override { return true; }
  // Whether an all-reduce of `bytes` runs as a ring (the same answer on every rank). Never on device memory:
  // the ring sums what arrives on the host (MPI_Reduce_local).
  bool use_ring(std::size_t bytes) const;

 protected:
  // Posts chunk `index` of a collective with `post`.
  using PostChunk = std::function<void(std::size_t index, MPI_Request* request)>;
  // The wait of one collective: its stall deadline starts now.
  PollBackoff start_wait() const;
  // Runs `chunks` chunks of one collective stage, at most kMaxInFlight of them in flight, polling them
  // until all are done or the deadline of `wait` passes. After a failure on_failure() abandons those in
  // flight.
  void run_chunks(PollBackoff& wait, std::size_t chunks, const PostChunk& post);
  // Runs `chunks` chunks through `stages` as a pipeline: chunk i enters stage s once it has finished
  // stage s - 1 on this rank. Each stage posts its chunks in order, at most kMaxInFlight in flight, so
  // stages on separate communicators match across ranks however their completions interleave.
  void run_pipeline(PollBackoff& wait, std::size_t chunks, const std::vector<PostChunk>& stages);
  // The regions cut into chunks of at most chunk_bytes_: (start, element count) in order.
  std::vector<std::pair<char*, int>> split_regions(const std::vector<SpanRegion>& regions, std::size_t element) const;
  // Waits for work queued on a device stream before MPI reads device memory.
  void sync_stream(void* stream);

  void transfer_allreduce(void* data, std::size_t count, DType dtype, void* stream) override;
  void transfer_allreduce_spans(const std::vector<HostSpan>& spans, DType dtype) override;
  void transfer_broadcast(void* data, std::size_t bytes, int root, void* stream) override;
  void transfer_allgather(const void* in, void* out, std::size_t bytes, void* stream) override;
  void transfer_barrier() override;
  void on_failure() noexcept override;

  // Sums the regions over all ranks in place; this flat version chunk by chunk over comm_, or as a ring.
  virtual void reduce_regions(const std::vector<SpanRegion>& regions, DType dtype);
  // The ring all-reduce of the regions over `comm`, polled to the deadline of `wait`.
  void ring_regions(PollBackoff& wait, MPI_Comm comm, const std::vector<SpanRegion>& regions, DType dtype);
  // Runs one stage over the chunks (of at most chunk_bytes_) of the regions, in order.
  using PostRegionChunk = std::function<void(char* data, int count, MPI_Request* request)>;
  void run_region_chunks(PollBackoff& wait, const std::vector<SpanRegion>& regions, std::size_t element,
                         const PostRegionChunk& post);

  MPI_Comm comm_ = MPI_COMM_NULL;
  MpiSumTypes sums_;
  std::size_t chunk_bytes_;

 private:
  void post_allgather_chunk(const char* in, char* out, std::size_t offset, std::size_t n, std::size_t bytes,
                            bool in_place, MPI_Request* request);

  // Sums `count` elements of device memory through a host copy: for dtypes whose sum runs on the host.
  void reduce_through_host(void* data, std::size_t count, DType dtype);

  bool device_memory_;
  bool on_device_now_ = false;  // the all-reduce running holds device memory (a CUDA-aware library)
  std::vector<char> host_copy_;  // reduce_through_host's buffer
  MpiAlgorithm mpi_algorithm_;
  std::vector<MPI_Request> in_flight_;  // requests of the collective running now (null when done)
  MpiRingState ring_;  // its slots outlive an abandoned ring (the backend's lifetime)
  std::vector<MPI_Request> abandoned_;  // requests of a collective that failed or stalled
  std::vector<std::unique_ptr<SpanStaging>> abandoned_staging_;  // their staging buffers
};

}  // namespace ft
