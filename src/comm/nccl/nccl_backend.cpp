// NCCL collectives with a deadline: a nonblocking communicator polled with ncclCommGetAsyncError, a CUDA
// event for completion, and ncclCommAbort on a timeout or asynchronous error.
#include "comm/nccl/nccl_backend.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <utility>
#include <vector>

#include "kernels/cuda_check.h"
#include "comm/nccl/nccl_check.h"
#include "comm/stall_inspector.h"
#include "runtime/network_interface.h"
#include "runtime/poll_backoff.h"
#include "runtime/world.h"

namespace ft {
namespace {

ncclDataType_t nccl_type_of(Float16Bits) { return ncclFloat16; }
ncclDataType_t nccl_type_of(BFloat16Bits) { return ncclBfloat16; }
ncclDataType_t nccl_type_of(float) { return ncclFloat32; }
ncclDataType_t nccl_type_of(double) { return ncclFloat64; }
ncclDataType_t nccl_type_of(std::int32_t) { return ncclInt32; }
ncclDataType_t nccl_type_of(std::int64_t) { return ncclInt64; }
ncclDataType_t nccl_type_of(std::uint8_t) { return ncclUint8; }

ncclDataType_t nccl_type(DType dtype) {
  return visit_dtype(dtype, [](auto element) { return nccl_type_of(element); });
}

// NCCL reads NCCL_SOCKET_IFNAME once, at its first call, for its bootstrap and inter-node sockets ("=":
// exactly this interface, not every name it prefixes).
void pin_sockets(const std::string& interface, int node_count) {
  const std::string name = socket_interface(interface, node_count, "NCCL_SOCKET_IFNAME");
  if (!name.empty())
    FT_CHECK(setenv("NCCL_SOCKET_IFNAME", ("=" + name).c_str(), 1) == 0, "setenv NCCL_SOCKET_IFNAME failed");
}

void warn(const char* what, const std::exception& e) {
  std::fprintf(stderr, "fusetrain: warning: nccl backend %s: %s\n", what, e.what());
}

// The last NCCL collective this process enqueued on a device, of any communicator.
struct DeviceChain {
  std::mutex mutex;
  cudaEvent_t last = nullptr;  // made once, kept for the process's life
};

DeviceChain& device_chain(int device) {
  static std::mutex mutex;
  static auto* chains = new std::map<int, DeviceChain>();  // never freed: a chain outlives every backend
  const std::lock_guard<std::mutex> lock(mutex);
  return (*chains)[device];
}

// Enqueues a collective with `enqueue` (which returns once NCCL has put it on `stream`) behind the one this
// process enqueued last on the device, whatever its communicator: two communicators of a rank (the gradient
// engine's and synchronised BatchNorm's) then never have kernels in flight together, and the device runs them
// in the order they were enqueued, which CollectiveOrder makes the same on every rank. Nothing is chained
// inside a CUDA graph's capture, which no other collective can interleave with.
template <typename Enqueue>
void chained(int device, cudaStream_t stream, Enqueue&& enqueue) {
  cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
  FT_CHECK_CUDA(cudaStreamIsCapturing(stream, &capture));
  if (capture != cudaStreamCaptureStatusNone) {
    enqueue();
    return;
  }
  DeviceChain& chain = device_chain(device);
  const std::lock_guard<std::mutex> lock(chain.mutex);
  if (!chain.last) FT_CHECK_CUDA(cudaEventCreateWithFlags(&chain.last, cudaEventDisableTiming));
  FT_CHECK_CUDA(cudaStreamWaitEvent(stream, chain.last, 0));
  enqueue();
  FT_CHECK_CUDA(cudaEventRecord(chain.last, stream));
}

}  // namespace

// A CUDA failure can hit one rank only (a bad device index on one node); the ranks agree on the local
// set-up before the unique id is broadcast, so every rank reports it instead of the others hanging.
NcclBackend::NcclBackend(const World& world, const BackendOptions& options)
    : Backend(world, "nccl", options.stall_timeout_s),
      device_(options.cuda_device),
      timeout_s_(options.stall_timeout_s) {
  ncclUniqueId id{};
  std::string setup_error;
  try {
    pin_sockets(options.interface, world.node_count());
    if (device_ < 0) FT_CHECK_CUDA(cudaGetDevice(&device_));
    FT_CHECK_CUDA(cudaSetDevice(device_));
    FT_CHECK_CUDA(cudaStreamCreateWithFlags(&barrier_stream_, cudaStreamNonBlocking));
    FT_CHECK_CUDA(cudaEventCreateWithFlags(&done_, cudaEventDisableTiming));
    FT_CHECK_CUDA(cudaMalloc(reinterpret_cast<void**>(&barrier_word_), sizeof(int)));
    FT_CHECK_CUDA(cudaMemset(barrier_word_, 0, sizeof(int)));
    if (rank_ == 0) FT_CHECK_NCCL(ncclGetUniqueId(&id));
  } catch (const std::exception& e) {
    setup_error = e.what();
  }
  const std::vector<std::string> errors = world.allgather(setup_error);
  for (int r = 0; r < size_; ++r) {
    if (errors[r].empty()) continue;
    release();
    throw Error(cat("nccl backend: rank ", r, " could not set up its GPU: ", errors[r]));
  }
  try {
    world.broadcast_bytes(&id, sizeof id, 0);
    ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
    config.blocking = 0;
    FT_CHECK_NCCL_ASYNC(ncclCommInitRankConfig(&comm_, size_, id, rank_, &config), comm_);
    PollBackoff wait(timeout_s_);
    while (poll_state() == ncclInProgress) {
      if (wait.expired())
        throw inspector().stall_error(cat("NCCL communicator set-up on device ", device_), wait.elapsed_s());
      wait.pause();
    }
    warm_up();
  } catch (...) {
    abort_communicator();
    release();
    throw;
  }
}

void NcclBackend::warm_up() {
  void* scratch = nullptr;
  FT_CHECK_CUDA(cudaMalloc(&scratch, 64));
  try {
    FT_CHECK_CUDA(cudaMemsetAsync(scratch, 0, 64, barrier_stream_));
    for (const DType dtype : {DType::kFloat16, DType::kBFloat16, DType::kFloat32, DType::kFloat64, DType::kInt32,
                              DType::kInt64, DType::kUInt8})
      run(barrier_stream_, [&] {
        FT_CHECK_NCCL_ASYNC(ncclAllReduce(scratch, scratch, 4, nccl_type(dtype), ncclSum, comm_, barrier_stream_), comm_);
      });
  } catch (...) {
    cudaFree(scratch);
    throw;
  }
  FT_CHECK_CUDA(cudaFree(scratch));
}

NcclBackend::~NcclBackend() {
  if (comm_) {
    try {
      FT_CHECK_CUDA(cudaSetDevice(device_));
      FT_CHECK_NCCL_ASYNC(ncclCommFinalize(comm_), comm_);
      PollBackoff wait(timeout_s_);
      while (poll_state() == ncclInProgress) {
        FT_CHECK(!wait.expired(), "ncclCommFinalize did not finish within ", timeout_s_, " s");
        wait.pause();
      }
      FT_CHECK_NCCL(ncclCommDestroy(comm_));
      comm_ = nullptr;
    } catch (const std::exception& e) {
      warn("shut-down", e);
      abort_detached();
    }
  }
  if (abort_settled()) release();  // else a kernel still holds the device: its resources go with the process
}

void NcclBackend::release() noexcept {
  try {
    for (const DoneEvent& e : in_flight_.clear()) FT_CHECK_CUDA(cudaEventDestroy(e.event));
    if (barrier_word_) FT_CHECK_CUDA(cudaFree(barrier_word_));
    if (done_) FT_CHECK_CUDA(cudaEventDestroy(done_));
    if (barrier_stream_) FT_CHECK_CUDA(cudaStreamDestroy(barrier_stream_));
  } catch (const std::exception& e) {
    warn("releasing CUDA resources", e);
  }
  barrier_word_ = nullptr;
  done_ = nullptr;
  barrier_stream_ = nullptr;
}

// ncclCommAbort blocks until the communicator's kernels and proxy threads have stopped, even on a
// nonblocking communicator; afterwards the streams it used are free again.
void NcclBackend::abort_communicator() noexcept {
  if (!comm_) return;
  try {
    FT_CHECK_NCCL(ncclCommAbort(comm_));
  } catch (const std::exception& e) {
    warn("abort", e);
  }
  comm_ = nullptr;
}

void NcclBackend::abort_detached() noexcept {
  if (!comm_) return;
  const ncclComm_t comm = std::exchange(comm_, nullptr);
  try {
    aborting_ = DetachedCall([comm] { FT_CHECK_NCCL(ncclCommAbort(comm)); });
  } catch (const std::exception& e) {
    warn("abort on a thread of its own", e);
    comm_ = comm;
    abort_communicator();
  }
}

bool NcclBackend::abort_settled() noexcept {
  if (!aborting_.started()) return true;
  try {
    if (aborting_.wait(timeout_s_)) return true;
    std::fprintf(stderr,
                 "fusetrain: warning: nccl backend: the communicator's abort has not returned after %g s (a kernel "
                 "still holds device %d); its CUDA resources are left to the process's exit\n",
                 timeout_s_, device_);
    return false;
  } catch (const std::exception& e) {
    warn("abort", e);
    return true;
  }
}

int nccl_runtime_version() {
  int version = 0;
  FT_CHECK_NCCL(ncclGetVersion(&version));
  return version;
}

ncclResult_t NcclBackend::poll_state() {
  ncclResult_t state = ncclSuccess;
  FT_CHECK_NCCL(ncclCommGetAsyncError(comm_, &state));
  if (state != ncclSuccess && state != ncclInProgress) raise_transport_failure(nccl_async_failure(state, comm_));
  return state;
}

void NcclBackend::wait_settled(PollBackoff& wait) {
  while (poll_state() == ncclInProgress) {
    if (wait.expired()) throw inspector().stall_error(wait.elapsed_s(), "the NCCL call did not return");
    wait.pause();
  }
}

template <typename Launch>
void NcclBackend::run(cudaStream_t stream, Launch&& launch) {
  PollBackoff wait(timeout_s_);
  FT_CHECK_CUDA(cudaSetDevice(device_));
  chained(device_, stream, [&] {
    launch();
    wait_settled(wait);
  });
  FT_CHECK_CUDA(cudaEventRecord(done_, stream));
  for (;;) {
    const cudaError_t state = cudaEventQuery(done_);
    if (state == cudaSuccess) break;
    if (state != cudaErrorNotReady) FT_CHECK_CUDA(state);
    poll_state();  // throws when NCCL reports an asynchronous error, e.g. a failed remote peer
    if (wait.expired()) throw inspector().stall_error(wait.elapsed_s());
    wait.pause();
  }
}

bool NcclBackend::DoneEvent::query() const {
  const cudaError_t state = cudaEventQuery(event);
  if (state == cudaErrorNotReady) return false;
  FT_CHECK_CUDA(state);
  return true;
}

// Enqueued, then left in flight behind a completion event: the caller orders its stream after the
// result (the engine's events), and poll/wait_in_flight watch it against the stall timeout.
void NcclBackend::transfer_allreduce(void* data, std::size_t count, DType dtype, void* stream) {
  const auto cuda_stream = static_cast<cudaStream_t>(stream);
  PollBackoff wait(timeout_s_);
  FT_CHECK_CUDA(cudaSetDevice(device_));
  chained(device_, cuda_stream, [&] {
    FT_CHECK_NCCL_ASYNC(ncclAllReduce(data, data, count, nccl_type(dtype), ncclSum, comm_, cuda_stream), comm_);
    wait_settled(wait);
  });
  DoneEvent done = in_flight_.take([] {
    DoneEvent fresh;
    FT_CHECK_CUDA(cudaEventCreateWithFlags(&fresh.event, cudaEventDisableTiming));
    return fresh;
  });
  FT_CHECK_CUDA(cudaEventRecord(done.event, cuda_stream));
  const std::string& label = CollectiveLabel::current();
  in_flight_.push(done, cat(label.empty() ? std::string("all-reduce") : label, " (", format_bytes(count * dtype_size(dtype)),
                            ")"));
  transfer_in_flight(kPollOnly);
}

void NcclBackend::transfer_in_flight(std::size_t keep) {
  PollBackoff backoff(timeout_s_);
  in_flight_.settle(
      keep,
      [&](double waited_s, const std::string& label) {
        poll_state();  // throws on an asynchronous NCCL error, e.g. a failed remote peer
        if (waited_s > timeout_s_)
          throw inspector().stall_error(waited_s,
                                        cat(label, " was enqueued but has not completed on device ", device_));
      },
      [&] { backoff.pause(); });
}

void NcclBackend::transfer_broadcast(void* data, std::size_t bytes, int root, void* stream) {
  const auto cuda_stream = static_cast<cudaStream_t>(stream);
  run(cuda_stream, [&] {
    FT_CHECK_NCCL_ASYNC(ncclBroadcast(data, data, bytes, ncclUint8, root, comm_, cuda_stream), comm_);
  });
}

void NcclBackend::transfer_allgather(const void* in, void* out, std::size_t bytes, void* stream) {
  const auto cuda_stream = static_cast<cudaStream_t>(stream);
  run(cuda_stream, [&] {
    FT_CHECK_NCCL_ASYNC(ncclAllGather(in, out, bytes, ncclUint8, comm_, cuda_stream), comm_);
  });
}

void NcclBackend::transfer_barrier() {
  run(barrier_stream_, [&] {
    FT_CHECK_NCCL_ASYNC(ncclAllReduce(barrier_word_, barrier_word_, 1, ncclInt32, ncclSum, comm_, barrier_stream_),
                        comm_);
  });
}

}  // namespace ft
