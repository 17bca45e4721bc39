// NCCL collectives with a deadline: a nonblocking communicator polled with ncclCommGetAsyncError, a CUDA
// event for completion, and ncclCommAbort on a timeout or asynchronous error.
#include "comm/nccl/nccl_backend.h"

#include <cstdio>
#include <vector>

#include "kernels/cuda_check.h"
#include "comm/nccl/nccl_check.h"
#include "runtime/poll_backoff.h"
#include "runtime/world.h"

namespace ft {
namespace {

ncclDataType_t nccl_type(DType dtype) {
  switch (dtype) {
    case DType::kFloat16: return ncclFloat16;
    case DType::kBFloat16: return ncclBfloat16;
    case DType::kFloat32: return ncclFloat32;
    case DType::kFloat64: return ncclFloat64;
    case DType::kInt32: return ncclInt32;
    case DType::kInt64: return ncclInt64;
    case DType::kUInt8: return ncclUint8;
  }
  throw Error(cat("no NCCL type for dtype ", static_cast<int>(dtype)));
}

void warn(const char* what, const std::exception& e) {
  std::fprintf(stderr, "fusetrain: warning: nccl backend %s: %s\n", what, e.what());
}

}  // namespace

// A CUDA failure can hit one rank only (a bad device index on one node); the ranks agree on the local
// set-up before the unique id is broadcast, so every rank reports it instead of the others hanging.
NcclBackend::NcclBackend(const World& world, const BackendOptions& options)
    : Backend(world.rank(), world.size()),
      device_(options.cuda_device),
      timeout_s_(options.stall_timeout_s),
      inspector_(world, "nccl", options.stall_timeout_s) {
  ncclUniqueId id{};
  std::string setup_error;
  try {
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
        throw inspector_.stall_error(cat("NCCL communicator set-up on device ", device_), wait.elapsed_s());
      wait.pause();
    }
  } catch (...) {
    abort_communicator();
    release();
    throw;
  }
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
      abort_communicator();
    }
  }
  release();
}

void NcclBackend::release() noexcept {
  try {
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

ncclResult_t NcclBackend::poll_state() {
  ncclResult_t state = ncclSuccess;
  FT_CHECK_NCCL(ncclCommGetAsyncError(comm_, &state));
  if (state != ncclSuccess && state != ncclInProgress)
    throw_error(__FILE__, __LINE__,
                cat(nccl_failure("asynchronous NCCL error", state, comm_), "; ", inspector_.diagnose()));
  return state;
}

void NcclBackend::wait_settled(PollBackoff& wait) {
  while (poll_state() == ncclInProgress) {
    if (wait.expired()) throw inspector_.stall_error(wait.elapsed_s(), "the NCCL call did not return");
    wait.pause();
  }
}

template <typename Launch>
void NcclBackend::run(const char* kind, std::size_t bytes, cudaStream_t stream, Launch&& launch) {
  FT_REQUIRE(failure_.empty(), "the nccl backend is unusable after an earlier failure: ", failure_);
  inspector_.begin(kind, bytes);
  PollBackoff wait(timeout_s_);
  try {
    FT_CHECK_CUDA(cudaSetDevice(device_));
    launch();
    wait_settled(wait);
    FT_CHECK_CUDA(cudaEventRecord(done_, stream));
    for (;;) {
      const cudaError_t state = cudaEventQuery(done_);
      if (state == cudaSuccess) break;
      if (state != cudaErrorNotReady) FT_CHECK_CUDA(state);
      poll_state();  // throws when NCCL reports an asynchronous error, e.g. a failed remote peer
      if (wait.expired()) throw inspector_.stall_error(wait.elapsed_s());
      wait.pause();
    }
  } catch (const std::exception& e) {
    failure_ = e.what();
    abort_communicator();
    throw;
  }
  inspector_.end();
}

void NcclBackend::allreduce(void* data, std::size_t count, DType dtype, void* stream) {
  const auto cuda_stream = static_cast<cudaStream_t>(stream);
  run("all-reduce", count * dtype_size(dtype), cuda_stream, [&] {
    if (count == 0) return;
    FT_CHECK_NCCL_ASYNC(ncclAllReduce(data, data, count, nccl_type(dtype), ncclSum, comm_, cuda_stream), comm_);
  });
}

void NcclBackend::broadcast(void* data, std::size_t bytes, int root, void* stream) {
  FT_REQUIRE(root >= 0 && root < size_, "broadcast root ", root, " is not a rank of a world of ", size_);
  const auto cuda_stream = static_cast<cudaStream_t>(stream);
  run("broadcast", bytes, cuda_stream, [&] {
    if (bytes == 0) return;
    FT_CHECK_NCCL_ASYNC(ncclBroadcast(data, data, bytes, ncclUint8, root, comm_, cuda_stream), comm_);
  });
}

void NcclBackend::allgather(const void* in, void* out, std::size_t bytes, void* stream) {
  const auto cuda_stream = static_cast<cudaStream_t>(stream);
  run("all-gather", bytes * static_cast<std::size_t>(size_), cuda_stream, [&] {
    if (bytes == 0) return;
    FT_CHECK_NCCL_ASYNC(ncclAllGather(in, out, bytes, ncclUint8, comm_, cuda_stream), comm_);
  });
}

void NcclBackend::barrier() {
  run("barrier", 0, barrier_stream_, [&] {
    FT_CHECK_NCCL_ASYNC(ncclAllReduce(barrier_word_, barrier_word_, 1, ncclInt32, ncclSum, comm_, barrier_stream_),
                        comm_);
  });
}

}  // namespace ft
