// PowerSGD gradient compression (Vogels et al., NeurIPS 2019) as PyTorch's powerSGD_hook computes it: each
// matrix-shaped gradient travels as the rank-r factors P and Q of one power-iteration step, with error feedback.
#pragma once

#include <ATen/ATen.h>

#include <atomic>
#include <cstdint>
#include <vector>

#include "engine/bucket_reducer.h"
#include "engine/engine.h"

namespace ft {

struct PowerSgdOptions {
  int rank = 1;                  // distributed.powersgd_rank
  std::int64_t start_step = 0;   // distributed.powersgd_start_step: steps all-reduced uncompressed first
  std::uint64_t seed = 0;        // the initial Q of every matrix, the same on every rank
};

// Per bucket, from options.start_step on: a gradient viewed as a matrix M [n, m] (a conv weight as [out,
// in*kh*kw]) is compressed when rank k = min(n, m, r) makes (n + m) k at most half of n m, as PyTorch's
// min_compression_rate 2 decides; the rest (biases, BatchNorm, small matrices) are all-reduced as they are,
// together with the first factors. With M = this rank's gradient (in PyTorch's units: its own images' mean) plus
// its error feedback e, and Q the warm-started factor, orthogonalised:
//   P = sum over ranks of M Q, orthogonalised;  Q = (sum over ranks of M^T P) / ranks;  M ~ P Q^T;  e = M - P Q^T.
// Two all-reduces per bucket: the vectors with every P, then every Q.
class PowerSgd final : public BucketReducer {
 public:
  // `parameters`: the gradient engine's tensors, in its order; `ranks`: the world size.
  PowerSgd(const std::vector<NamedTensor>& parameters, int ranks, const PowerSgdOptions& options);
  ~PowerSgd() override;

  void reduce(const BucketSpec& bucket, at::Tensor& buffer, const AllReduce& allreduce) override;
  // Before optimizer step `step` (0-based, counted over the whole run) is computed: it is compressed when
  // step >= options.start_step.
  void set_step(std::int64_t step) { step_.store(step); }

  // The state a resumed run continues from, one tensor per compressed matrix, updated in place: Q, the same
  // on every rank, and this rank's error feedback.
  std::vector<at::Tensor> shared_state() const;
  std::vector<at::Tensor> rank_state() const;
  // Whether tensor `index` of the engine's list is compressed, and its factor Q [m, k] and error [n, m].
  bool compressed(std::size_t index) const { return matrix_of_[index] >= 0; }
  const at::Tensor& q(std::size_t index) const;
  const at::Tensor& error(std::size_t index) const;

 private:
  struct Matrix;
  void compress(const BucketSpec& bucket, at::Tensor& buffer, const AllReduce& allreduce);

  std::vector<int> matrix_of_;  // tensor index -> its entry in matrices_, or -1 when sent as it is
  std::vector<std::int64_t> numels_;  // tensor index -> its elements
  std::vector<Matrix> matrices_;
  int ranks_;
  PowerSgdOptions options_;
  std::atomic<std::int64_t> step_{0};
};

// Orthonormalises the columns of `m` [rows, k] in place as PyTorch's PowerSGD does: Gram-Schmidt for k <= 2,
// QR beyond (a column of zeros stays zero where PyTorch, without its epsilon, would divide by zero).
void orthogonalise(at::Tensor& m);

}  // namespace ft
