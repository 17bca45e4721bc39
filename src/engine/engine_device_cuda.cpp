// CUDA ordering for the gradient engine: packing is recorded on the autograd stream, collectives run
// on a pooled communication stream that waits on it, and the compute stream waits on their completion.
#ifdef FUSETRAIN_WITH_CUDA
#include <ATen/cuda/CUDAEvent.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>

#include <algorithm>
#include <vector>

#include "engine/engine_device.h"

namespace ft {
namespace {

// One step's timing events: each bucket's transfer on the communication stream, and backward's end on
// the compute stream. A ring of them lets the host run steps ahead of the device without losing a time.
struct StepEvents {
  explicit StepEvents(std::size_t buckets) {
    for (std::size_t b = 0; b < buckets; ++b) start.emplace_back(cudaEventDefault), end.emplace_back(cudaEventDefault);
  }
  std::vector<at::cuda::CUDAEvent> start, end;
  at::cuda::CUDAEvent backward_end{cudaEventDefault};
  bool pending = false;  // recorded and not yet collected
};

constexpr std::size_t kTimedSteps = 8;

struct CudaBucketSync final : BucketDeviceSync {
  explicit CudaBucketSync(std::size_t buckets)
      : stream(c10::cuda::getStreamFromPool(/*isHighPriority=*/true)), packed(buckets), done(buckets) {
    for (std::size_t i = 0; i < kTimedSteps; ++i) ring.emplace_back(buckets);
  }

  void mark_packed(std::size_t b) override { packed[b].record(c10::cuda::getCurrentCUDAStream()); }

  void run(std::size_t b, const std::function<void()>& work) override {
    c10::cuda::CUDAStreamGuard guard(stream);
    packed[b].block(stream);
    ring[slot].start[b].record(stream);
    work();
    ring[slot].end[b].record(stream);
    done[b].record(stream);
  }

  bool times_on_device() const override { return true; }

  // The slot about to be reused is collected first (waiting for it only if the host ran kTimedSteps ahead).
  void begin_step() override {
    slot = (slot + 1) % kTimedSteps;
    if (ring[slot].pending) {
      ring[slot].end.empty() ? ring[slot].backward_end.synchronize() : ring[slot].end.back().synchronize();
      add(ring[slot]);
    }
    ring[slot].pending = true;
  }

  void mark_backward_end() override { ring[slot].backward_end.record(c10::cuda::getCurrentCUDAStream()); }

  void collect(double& transfer_s, double& exposed_s) override {
    for (StepEvents& step : ring)
      if (step.pending && (step.end.empty() || step.end.back().query()) && step.backward_end.query()) add(step);
    transfer_s += transfer_s_, exposed_s += exposed_s_;
    transfer_s_ = exposed_s_ = 0;
  }

  // Accumulates one completed step's times; the communication stream runs its buckets in order, so the
  // last bucket's end is when the compute stream may go on.
  void add(StepEvents& step) {
    step.pending = false;
    bool recorded = step.backward_end.isCreated();
    for (std::size_t b = 0; b < step.end.size(); ++b) recorded = recorded && step.start[b].isCreated() && step.end[b].isCreated();
    if (!recorded) return;  // a step that stopped before its transfers (an error) has nothing to add
    for (std::size_t b = 0; b < step.end.size(); ++b) transfer_s_ += step.start[b].elapsed_time(step.end[b]) / 1e3;
    if (!step.end.empty())
      exposed_s_ += std::max(0.0f, step.backward_end.elapsed_time(step.end.back())) / 1e3;
  }

  void allreduce(Backend& backend, at::Tensor& data, DType dtype) override {
    const auto n = static_cast<std::size_t>(data.numel());
    if (backend.uses_device_memory()) {
      backend.allreduce(data.data_ptr(), n, dtype, stream.stream());
      return;
    }
    if (!staging.defined() || staging.numel() < data.numel() || staging.scalar_type() != data.scalar_type())
      staging = at::empty({data.numel()}, data.options().device(at::kCPU).pinned_memory(true));
    auto host = staging.narrow(0, 0, data.numel());
    host.copy_(data, /*non_blocking=*/true);
    stream.synchronize();
    backend.allreduce(host.data_ptr(), n, dtype);
    data.copy_(host, /*non_blocking=*/true);
  }

  void wait_all(std::size_t buckets) override {
    const auto current = c10::cuda::getCurrentCUDAStream();
    for (std::size_t b = 0; b < buckets; ++b) done[b].block(current);
  }

  c10::cuda::CUDAStream stream;
  std::vector<at::cuda::CUDAEvent> packed, done;
  at::Tensor staging;
  std::vector<StepEvents> ring;
  std::size_t slot = 0;
  double transfer_s_ = 0, exposed_s_ = 0;
};

}  // namespace

std::unique_ptr<BucketDeviceSync> make_cuda_bucket_sync(std::size_t buckets) {
  return std::make_unique<CudaBucketSync>(buckets);
}

}  // namespace ft
#endif
