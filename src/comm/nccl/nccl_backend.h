// The NCCL backend: GPU collectives on a caller's CUDA stream over a nonblocking NCCL communicator, so
// that a dead or hung peer ends in ncclCommAbort and a StallError naming it rather than a hang.
#pragma once

#include <cuda_bf16.h>  // before nccl.h: older NCCL headers define ncclBfloat16 only when it is seen
#include <cuda_runtime.h>
#include <nccl.h>

#include "comm/backend.h"
#include "comm/in_flight.h"
#include "runtime/detached_call.h"

#if NCCL_VERSION_CODE < NCCL_VERSION(2, 14, 0)
#error "the nccl backend needs NCCL 2.14 or newer (nonblocking communicators, ncclCommFinalize)"
#endif

namespace ft {

class PollBackoff;

// ncclGetVersion: the version code of the NCCL library loaded (which may be newer than the header's).
int nccl_runtime_version();

// One rank per GPU: the communicator is created on options.cuda_device (the current device when -1)
// from a unique id that rank 0 broadcasts over MPI. Each collective is enqueued on the given stream
// (the legacy default stream when null). An all-reduce returns once enqueued, with a completion event
// in flight: the gradient engine's buckets overlap one another and the host never waits for them;
// poll_in_flight()/wait_in_flight() hold the oldest against the stall timeout and the communicator's
// asynchronous error state. Broadcast, all-gather and barrier return once completed. Data pointers are
// device memory. Collectives from one thread at a time; polling may come from another.
class NcclBackend final : public Backend {
 public:
  // Collective over world.
  NcclBackend(const World& world, const BackendOptions& options);
  ~NcclBackend() override;

  bool uses_device_memory() const override { return true; }

 private:
  void transfer_allreduce(void* data, std::size_t count, DType dtype, void* stream) override;
  void transfer_broadcast(void* data, std::size_t bytes, int root, void* stream) override;
  void transfer_allgather(const void* in, void* out, std::size_t bytes, void* stream) override;
  void transfer_barrier() override;
  void transfer_in_flight(std::size_t keep) override;
  void on_failure() noexcept override { abort_detached(); }
  // Enqueues a collective with `launch`, then waits for it on `stream` until done or the deadline.
  template <typename Launch>
  void run(cudaStream_t stream, Launch&& launch);
  // ncclInProgress while the communicator is busy with a nonblocking call, else ncclSuccess; on an asynchronous
  // NCCL error throws (raise_transport_failure): a StallError naming the lost rank when a peer is gone.
  ncclResult_t poll_state();
  void wait_settled(PollBackoff& wait);
  // One small all-reduce of every element type, waited for against the stall timeout: NCCL sets a
  // communicator up lazily on its first collectives, and the first all-reduce of training that met a busy
  // device there would wait for the device, out of the stall check's sight.
  void warm_up();
  void release() noexcept;
  void abort_communicator() noexcept;
  // ncclCommAbort returns only once the communicator's kernels have stopped, and a kernel queued behind one
  // that holds its stream starts only when that one ends: after a failure the abort runs on a thread of its
  // own, so the error reaches the caller within the stall timeout. abort_settled() waits for it at most
  // that timeout again; false (with a warning) when it has not returned.
  void abort_detached() noexcept;
  bool abort_settled() noexcept;

  int device_ = 0;
  double timeout_s_;
  ncclComm_t comm_ = nullptr;
  cudaStream_t barrier_stream_ = nullptr;
  cudaEvent_t done_ = nullptr;
  int* barrier_word_ = nullptr;
  DetachedCall aborting_;

  // A completion event recorded behind an enqueued all-reduce.
  struct DoneEvent {
    cudaEvent_t event = nullptr;
    bool query() const;
  };
  InFlight<DoneEvent> in_flight_;
};

}  // namespace ft
