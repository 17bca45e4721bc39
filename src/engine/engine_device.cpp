// Host implementation of BucketDeviceSync (CPU tensors need no ordering beyond the engine's locks), and
// the factory that picks the CUDA implementation (engine_device_cuda.cpp) for device tensors.
#include "engine/engine_device.h"

#include "runtime/error.h"

namespace ft {

#ifdef FUSETRAIN_WITH_CUDA
std::unique_ptr<BucketDeviceSync> make_cuda_bucket_sync(std::size_t buckets);
#endif

namespace {

struct HostBucketSync final : BucketDeviceSync {
  void mark_packed(std::size_t) override {}
  void run(std::size_t, const std::function<void()>& work) override { work(); }
  void allreduce(Backend& backend, at::Tensor& data, DType dtype) override {
    backend.allreduce(data.data_ptr(), static_cast<std::size_t>(data.numel()), dtype);
  }
  void wait_all(std::size_t) override {}
};

}  // namespace

std::unique_ptr<BucketDeviceSync> make_bucket_device_sync(bool cuda, std::size_t buckets) {
  if (!cuda) return std::make_unique<HostBucketSync>();
#ifdef FUSETRAIN_WITH_CUDA
  return make_cuda_bucket_sync(buckets);
#else
  (void)buckets;
  throw Error("parameters live on a CUDA device but this fusetrain was built without CUDA");
#endif
}

}  // namespace ft
