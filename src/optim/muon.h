// Muon for convolution filters (airbench94_muon's): SGD-momentum whose update of each filter tensor, as a matrix
// [out, in*kh*kw], is orthogonalised by a quintic Newton-Schulz iteration; every other parameter keeps SGD.
#pragma once

#include <ATen/ATen.h>
#include <torch/optim/sgd.h>

#include <vector>

namespace ft {

// The quintic iteration's coefficients (airbench94_muon's, chosen for the largest slope at zero).
constexpr double kNewtonSchulzA = 3.4445, kNewtonSchulzB = -4.7750, kNewtonSchulzC = 2.0315;

struct NewtonSchulz {
  int steps = 3;
  double eps = 1e-7;
  at::ScalarType dtype = at::kBFloat16;  // the iteration's arithmetic (bf16 as the reference; fp32/fp64 too)
};

// The iteration on each matrix of `g` ([m, n] or a batch [B, m, n]), in ns.dtype: X = G / (||G||_F + eps),
// transposed while m > n, then `steps` times A = X X^T, X = a X + (b A + c A A) X, transposed back. Its
// singular vectors are G's, its singular values pushed towards 1 (roughly into [0.5, 1.5], not exactly 1).
at::Tensor newton_schulz(const at::Tensor& g, const NewtonSchulz& ns);

// One Muon step of parameters with their gradients and momentum buffers (the buffers in the parameters'
// dtype, updated in place). Per parameter, as the reference orders it: buf = momentum buf + grad; the update
// is grad + momentum buf (Nesterov) or buf; the weight is rescaled to Frobenius norm sqrt(out), then moves by
// -lr x the orthogonalised update. Parameters of equal shape are orthogonalised as one batch.
struct MuonStep {
  at::Tensor lr;  // 0-dimensional: on the parameters' device, or a CPU scalar
  double momentum = 0;
  bool nesterov = false;
  NewtonSchulz ns;
  at::Tensor skip;        // one element, or undefined: non-zero leaves parameters and buffers as they were
  at::Tensor grad_scale;  // one element, or undefined: the gradients are this times the true ones
};
void muon_update(const std::vector<at::Tensor>& params, const std::vector<at::Tensor>& grads,
                 const std::vector<at::Tensor>& buffers, const MuonStep& step);

// The Newton-Schulz arithmetic for parameters like `param`: bf16 on CUDA (as the reference), float32 on the CPU
// (float64 for float64 parameters).
NewtonSchulz newton_schulz_for(const at::Tensor& param, int steps);

// LibTorch's SGD whose `orthogonal` groups step as Muon: their state is SGD's momentum buffer, so checkpoints
// save and load it as SGD's. step() is the per-tensor path: Muon for those groups, LibTorch's SGD for the rest.
class Muon : public torch::optim::SGD {
 public:
  Muon(const std::vector<torch::optim::OptimizerParamGroup>& groups, const torch::optim::SGDOptions& defaults,
       std::vector<bool> orthogonal, int ns_steps);
  at::Tensor step(LossClosure closure = nullptr) override;
  bool orthogonal(std::size_t group) const { return orthogonal_.at(group); }
  int ns_steps() const { return ns_steps_; }

 private:
  std::vector<bool> orthogonal_;
  int ns_steps_;
};

// The momentum buffer of `param` in `optimizer`'s SGD state, made as zeros when missing.
at::Tensor& momentum_buffer(torch::optim::Optimizer& optimizer, const at::Tensor& param);

}  // namespace ft
