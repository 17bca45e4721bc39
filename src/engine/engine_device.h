// How the gradient engine orders its work against the device: a no-op on CPU; on CUDA, events from
// the packing stream to a dedicated communication stream and back, plus host staging for MPI/Gloo.
#pragma once

#include <ATen/ATen.h>

#include <functional>
#include <memory>

#include "comm/backend.h"

namespace ft {

struct BucketDeviceSync {
  virtual ~BucketDeviceSync() = default;
  // On the thread that packed a bucket's last gradient: the bucket's data is complete on its stream.
  virtual void mark_packed(std::size_t bucket) = 0;
  // On the communication thread: runs `work` once the bucket's packing is visible, on the
  // communication stream, and records its completion.
  virtual void run(std::size_t bucket, const std::function<void()>& work) = 0;
  // Inside run(): all-reduces `data` in place (device pointer or staged through host memory).
  virtual void allreduce(Backend& backend, at::Tensor& data, DType dtype) = 0;
  // On the main thread after all buckets finished: makes their results visible to the compute stream.
  virtual void wait_all(std::size_t buckets) = 0;
};

std::unique_ptr<BucketDeviceSync> make_bucket_device_sync(bool cuda, std::size_t buckets);

}  // namespace ft
