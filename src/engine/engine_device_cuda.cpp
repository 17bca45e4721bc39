// CUDA ordering for the gradient engine: packing is recorded on the autograd stream, collectives run
// on a pooled communication stream that waits on it, and the compute stream waits on their completion.
#ifdef FUSETRAIN_WITH_CUDA
#include <ATen/cuda/CUDAEvent.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>

#include <vector>

#include "engine/engine_device.h"

namespace ft {
namespace {

struct CudaBucketSync final : BucketDeviceSync {
  explicit CudaBucketSync(std::size_t buckets)
      : stream(c10::cuda::getStreamFromPool(/*isHighPriority=*/true)), packed(buckets), done(buckets) {}

  void mark_packed(std::size_t b) override { packed[b].record(c10::cuda::getCurrentCUDAStream()); }

  void run(std::size_t b, const std::function<void()>& work) override {
    c10::cuda::CUDAStreamGuard guard(stream);
    packed[b].block(stream);
    work();
    done[b].record(stream);
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
};

}  // namespace

std::unique_ptr<BucketDeviceSync> make_cuda_bucket_sync(std::size_t buckets) {
  return std::make_unique<CudaBucketSync>(buckets);
}

}  // namespace ft
#endif
