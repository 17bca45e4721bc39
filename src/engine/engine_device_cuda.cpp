// CUDA ordering for the gradient engine: packing is recorded on the autograd stream, collectives run
// on a pooled communication stream that waits on it, and the compute stream waits on their completion.
#ifdef FUSETRAIN_WITH_CUDA
#include <ATen/cuda/CUDAEvent.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>

#include <algorithm>
#include <vector>

#include "engine/engine_device.h"
#include "comm/stall_inspector.h"
#include "engine/step_clocks.h"

namespace ft {
namespace {

// Steps the host may run ahead of the device with their times kept: 8 slots made up front, growing to 64
// (StepClocks never waits for the device; a host further ahead loses the oldest step's times).
constexpr std::size_t kTimedSteps = 8;
constexpr std::size_t kMaxTimedSteps = 64;

at::cuda::CUDAEvent timing_event() { return at::cuda::CUDAEvent(cudaEventDefault); }

struct CudaBucketSync final : BucketDeviceSync {
  explicit CudaBucketSync(std::size_t buckets)
      : stream(c10::cuda::getStreamFromPool(/*isHighPriority=*/true)),
        packed(buckets),
        done(buckets),
        clocks(buckets, kTimedSteps, timing_event, kMaxTimedSteps) {}

  void mark_packed(std::size_t b) override { packed[b].record(c10::cuda::getCurrentCUDAStream()); }

  void run(std::size_t b, const std::function<void()>& work) override {
    c10::cuda::CUDAStreamGuard guard(stream);
    packed[b].block(stream);
    StepEvents<at::cuda::CUDAEvent>& step = clocks.current();
    step.start[b].record(stream);
    work();
    step.end[b].record(stream);
    ++step.transfers;
    done[b].record(stream);
  }

  bool times_on_device() const override { return true; }
  void begin_step() override { clocks.begin_step(); }

  void mark_backward_end() override {
    StepEvents<at::cuda::CUDAEvent>& step = clocks.current();
    step.backward_end.record(c10::cuda::getCurrentCUDAStream());
    step.backward = true;
  }

  void collect(double& transfer_s, double& exposed_s, std::int64_t& untimed_steps) override {
    clocks.collect(transfer_s, exposed_s, untimed_steps);
  }

  void allreduce(Backend& backend, at::Tensor& data, DType dtype) override {
    const auto n = static_cast<std::size_t>(data.numel());
    if (backend.uses_device_memory()) {
      backend.allreduce(data.data_ptr(), n, dtype, stream.stream());
      return;
    }
    if (!staging.defined() || staging.numel() < data.numel() || staging.scalar_type() != data.scalar_type())
      staging = at::empty({data.numel()}, data.options().device(at::kCPU).pinned_memory(true));
    auto host = staging.narrow(0, 0, data.numel()).view(data.sizes());  // any shape: bench hands whole tensors
    host.copy_(data, /*non_blocking=*/true);
    stream.synchronize();
    backend.allreduce(host.data_ptr(), n, dtype);
    data.copy_(host, /*non_blocking=*/true);
  }

  void warm_up(Backend& backend, const std::vector<std::pair<at::Tensor, DType>>& buffers) override {
    if (!backend.uses_device_memory()) return;
    at::cuda::CUDAEvent filled;
    filled.record(c10::cuda::getCurrentCUDAStream());  // the buffers' zeros
    filled.block(stream);
    for (const auto& [data, dtype] : buffers) {
      const CollectiveLabel label(cat("warm-up all-reduce of ", format_bytes(data.nbytes())));
      backend.allreduce(data.data_ptr(), static_cast<std::size_t>(data.numel()), dtype, stream.stream());
    }
    backend.wait_in_flight();
  }

  void wait_all(std::size_t buckets) override {
    const auto current = c10::cuda::getCurrentCUDAStream();
    for (std::size_t b = 0; b < buckets; ++b) done[b].block(current);
  }

  c10::cuda::CUDAStream stream;
  std::vector<at::cuda::CUDAEvent> packed, done;
  at::Tensor staging;
  StepClocks<at::cuda::CUDAEvent> clocks;
};

}  // namespace

std::unique_ptr<BucketDeviceSync> make_cuda_bucket_sync(std::size_t buckets) {
  return std::make_unique<CudaBucketSync>(buckets);
}

}  // namespace ft
#endif
