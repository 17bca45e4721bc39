// How the gradient engine orders its work against the device: a no-op on CPU; on CUDA, events from
// the packing stream to a dedicated communication stream and back, plus host staging for MPI/Gloo.
#pragma once

#include <ATen/ATen.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <utility>
#include <vector>

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
  // Before the first step, on the main thread (collective): one all-reduce of each of `buffers` on the
  // communication stream through a backend that enqueues on the device, waited for. NCCL connects an
  // algorithm's channels on the first collective of a size that uses them; this moves that set-up out of
  // training. A no-op elsewhere.
  virtual void warm_up(Backend& backend, const std::vector<std::pair<at::Tensor, DType>>& buffers) {
    (void)backend, (void)buffers;
  }

  // Device clocks for the engine's statistics. Host clocks around an asynchronous transfer time its
  // launch, so on a device the transfers and the compute stream's wait for them are timed by events.
  // Whether this sync times on the device (the engine's host clocks are used otherwise).
  virtual bool times_on_device() const { return false; }
  // On the main thread, before a synchronising step's buckets are packed.
  virtual void begin_step() {}
  // On the main thread when finish() starts: backward's end on the compute stream.
  virtual void mark_backward_end() {}
  // Adds the device seconds of the completed steps not yet collected: the transfers (summed over buckets)
  // and the compute stream's wait for them after backward ended (exposed); and counts the steps that ended
  // before their events were recorded (an error), whose times are lost.
  virtual void collect(double& transfer_s, double& exposed_s, std::int64_t& untimed_steps) {
    (void)transfer_s, (void)exposed_s, (void)untimed_steps;
  }
};

std::unique_ptr<BucketDeviceSync> make_bucket_device_sync(bool cuda, std::size_t buckets);

}  // namespace ft
