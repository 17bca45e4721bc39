// How a bucket's packed gradients come to agree across ranks where that is more than one all-reduce of the
// bucket: a compression that keeps state from step to step (PowerSGD) runs here, on the communication thread.
#pragma once

#include <ATen/ATen.h>

#include <functional>

#include "comm/bucket_plan.h"

namespace ft {

class BucketReducer {
 public:
  // Sums a contiguous tensor of the bucket's dtype over all ranks, in place (the engine's all-reduce, on its
  // communication stream on a GPU, its bytes counted in the engine's statistics).
  using AllReduce = std::function<void(at::Tensor&)>;

  virtual ~BucketReducer() = default;
  // On the communication thread, for each bucket of each synchronising step in plan order: `buffer` holds the
  // bucket's packed gradients, this rank's share of the mean (their sum over the ranks is the mean gradient),
  // and one status element after them. Afterwards it holds the agreed gradients and the status summed over
  // the ranks, the same on every rank.
  virtual void reduce(const BucketSpec& bucket, at::Tensor& buffer, const AllReduce& allreduce) = 0;
};

}  // namespace ft
