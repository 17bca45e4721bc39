// The bookkeeping of distributed.reproducible's step: micro-batches in the global order, each with its own
// dropout stream and BatchNorm statistics, their gradients and statistics summed exactly over all ranks.
#pragma once

#include <ATen/ATen.h>

#include <memory>
#include <vector>

#include "engine/exact_sum.h"
#include "models/network.h"

namespace ft {

class World;

// Per step, on every rank, micro-batches a = 0 .. rows-1 of this rank: micro-batch k = a x ranks + rank of
// the step's `terms` (the order of the global batch, whatever the number of ranks). The step's gradient is
// the exact mean over all of them; BatchNorm's running statistics take one update per step, with the mean
// of the micro-batches' batch statistics (as each micro-batch's own forward would report them), in place of
// one update per forward.
class ExactMicroBatches {
 public:
  ExactMicroBatches(Network& network, std::vector<at::Tensor> parameters, int rows, int terms, int rank, int ranks,
                   std::uint64_t seed);
  ~ExactMicroBatches();

  // Before micro-batch `a` of `step`: gradients cleared, dropout seeded by (seed, epoch, step, k), BatchNorm
  // set to leave this micro-batch's statistics in its running buffers.
  void begin_micro_batch(int epoch, std::int64_t step, int a);
  // After its backward: its gradients, BatchNorm statistics and `loss_sum` (the sum of its images' losses)
  // kept; the running buffers restored.
  void end_micro_batch(int a, const at::Tensor& loss_sum);
  // Collective: every rank's micro-batches summed exactly: .grad holds the mean gradient, BatchNorm takes its
  // one update, and the step's loss sum over the global batch is returned ([1] float64 on the device).
  at::Tensor finish(const World& world);

 private:
  struct Norm;
  void keep_row(int a, const at::Tensor& loss_sum);

  std::vector<at::Tensor> parameters_;
  std::vector<std::unique_ptr<Norm>> norms_;
  std::unique_ptr<ExactSum> sum_;
  int rank_, ranks_, terms_;
  std::uint64_t seed_;
};

}  // namespace ft
