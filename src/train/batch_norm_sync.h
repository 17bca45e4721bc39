// model.sync_batchnorm on a replica: the communicator its BatchNorm layers sum over (a backend of the run's kind
// of its own, so its collectives never interleave with the gradient engine's), attached for one run.
#pragma once

#include <ATen/ATen.h>

#include <memory>
#include <vector>

#include "comm/backend.h"
#include "comm/collective_order.h"
#include "config/schema.h"
#include "models/network.h"
#include "models/sync_batch_norm.h"

namespace ft {

class World;

// The backend of the run's kind (distributed.backend, its stall timeout and interface) on `device`.
BackendOptions run_backend_options(const Config& config, const at::Device& device);

// BatchNorm's sums over a backend kept for them alone, so that they never interleave with the gradient engine's
// all-reduces of buckets during backward. NCCL sums on the tensor's current stream (the host enqueues at most
// a bounded number ahead of the device); MPI and Gloo stage GPU tensors through host memory.
// With NCCL, each sum takes its place in `order` (shared with the gradient engine, whose buckets autograd's thread
// makes ready between these sums), so that both communicators enqueue in the same order on every rank.
class BackendNormSync final : public NormSync {
 public:
  explicit BackendNormSync(Backend& backend, CollectiveOrder* order = nullptr) : backend_(backend), order_(order) {}
  void allreduce(at::Tensor& t, const char* what) override;

 private:
  Backend& backend_;
  CollectiveOrder* order_;
};

class BatchNormSyncing {
 public:
  // With model.sync_batchnorm on several ranks, every BatchNorm layer of `network` normalises over all ranks
  // through `given`, or through a backend it makes when `given` is null (collective then); with a backend whose
  // collectives are enqueued on the device (NCCL), in the places of `order` (the gradient engine's too).
  // Otherwise nothing changes. Throws ft::Error naming the key when the network has no BatchNorm layer.
  BatchNormSyncing(const Config& config, const World& world, Network& network, const at::Device& device,
                   Backend* given, CollectiveOrder* order = nullptr);
  // The layers normalise over their own images again.
  ~BatchNormSyncing();
  BatchNormSyncing(const BatchNormSyncing&) = delete;
  BatchNormSyncing& operator=(const BatchNormSyncing&) = delete;

  bool on() const { return on_; }
  // What the replica check compares: `parameters`, and with synchronised statistics the BatchNorm buffers too.
  std::vector<at::Tensor> replica_tensors(std::vector<at::Tensor> parameters) const;

 private:
  Network& network_;
  std::unique_ptr<Backend> own_;
  bool on_ = false;
};

}  // namespace ft
