// Muon's arithmetic in ATen operations only (no host read, so a CUDA graph can hold it): the batched Newton-Schulz
// iteration, the momentum and weight-norm steps with a device-side skip, and the per-tensor optimizer around them.
#include "optim/muon.h"

#include <cmath>
#include <map>
#include <utility>

#include "runtime/error.h"

namespace ft {
namespace {

// `fresh` where the step is taken, `old` where the device's skip flag says to leave it.
at::Tensor unless_skipped(const at::Tensor& skip, const at::Tensor& old, const at::Tensor& fresh) {
  return skip.defined() ? at::where(skip.ne(0), old, fresh) : fresh;
}

// The gradient as the update sees it: float32 (or the parameter's wider type), divided by the loss scale when
// the gradients still carry it.
at::Tensor true_gradient(const at::Tensor& grad, const MuonStep& step) {
  const at::Tensor g = grad.scalar_type() == at::kDouble ? grad : grad.to(at::kFloat);
  return step.grad_scale.defined() ? g / step.grad_scale : g;
}

// The momentum step of one parameter; returns the update to orthogonalise, as [out, in*kh*kw].
at::Tensor momentum_update(const at::Tensor& grad, const at::Tensor& buffer, const MuonStep& step) {
  const at::Tensor g = true_gradient(grad, step);
  buffer.copy_(unless_skipped(step.skip, buffer, buffer * step.momentum + g));
  const at::Tensor update = step.nesterov ? g + buffer * step.momentum : buffer.to(g.scalar_type());
  return update.reshape({update.size(0), -1});
}

// The weight rescaled to Frobenius norm sqrt(out), then moved by -lr x its orthogonalised update.
void apply_update(const at::Tensor& param, const at::Tensor& orthogonal, const MuonStep& step) {
  const at::Tensor w = param.scalar_type() == at::kDouble ? param : param.to(at::kFloat);
  const at::Tensor norm = at::linalg_vector_norm(w, 2).clamp_min(1e-30);  // a zero weight stays zero
  const at::Tensor scaled = w * (std::sqrt(static_cast<double>(param.size(0))) / norm);
  const at::Tensor moved = scaled - orthogonal.to(w.scalar_type()).reshape(param.sizes()) * step.lr;
  param.copy_(unless_skipped(step.skip, param, moved));
}

}  // namespace

at::Tensor newton_schulz(const at::Tensor& g, const NewtonSchulz& ns) {
  FT_REQUIRE(g.dim() == 2 || g.dim() == 3, "Newton-Schulz: a matrix or a batch of matrices, not ", g.sizes());
  at::Tensor x = g.to(ns.dtype);
  x = x / (at::linalg_vector_norm(x, 2, at::IntArrayRef{-2, -1}, /*keepdim=*/true) + ns.eps);
  const bool tall = g.size(-2) > g.size(-1);
  if (tall) x = x.transpose(-2, -1);
  for (int i = 0; i < ns.steps; ++i) {
    const at::Tensor a = at::matmul(x, x.transpose(-2, -1));
    const at::Tensor b = a * kNewtonSchulzB + at::matmul(a, a) * kNewtonSchulzC;
    x = x * kNewtonSchulzA + at::matmul(b, x);
  }
  return tall ? x.transpose(-2, -1) : x;
}

NewtonSchulz newton_schulz_for(const at::Tensor& param, int steps) {
  NewtonSchulz ns;
  ns.steps = steps;
  ns.dtype = param.is_cuda() ? at::kBFloat16 : param.scalar_type() == at::kDouble ? at::kDouble : at::kFloat;
  return ns;
}

void muon_update(const std::vector<at::Tensor>& params, const std::vector<at::Tensor>& grads,
                 const std::vector<at::Tensor>& buffers, const MuonStep& step) {
  FT_CHECK(params.size() == grads.size() && params.size() == buffers.size(), "Muon: ", params.size(),
           " parameters with ", grads.size(), " gradients and ", buffers.size(), " momentum buffers");
  at::NoGradGuard no_grad;
  std::map<std::vector<std::int64_t>, std::vector<std::size_t>> by_shape;  // one batch per shape
  for (std::size_t i = 0; i < params.size(); ++i) {
    FT_REQUIRE(params[i].dim() >= 2, "Muon orthogonalises matrices and filters, not a parameter of shape ",
               params[i].sizes());
    by_shape[params[i].sizes().vec()].push_back(i);
  }
  for (const auto& [shape, members] : by_shape) {
    std::vector<at::Tensor> updates;
    for (const std::size_t i : members) updates.push_back(momentum_update(grads[i], buffers[i], step));
    const at::Tensor orthogonal = newton_schulz(at::stack(updates), step.ns);
    for (std::size_t k = 0; k < members.size(); ++k) apply_update(params[members[k]], orthogonal[k], step);
  }
}

at::Tensor& momentum_buffer(torch::optim::Optimizer& optimizer, const at::Tensor& param) {
  auto& slot = optimizer.state()[param.unsafeGetTensorImpl()];
  if (!slot) slot = std::make_unique<torch::optim::SGDParamState>();
  auto* state = dynamic_cast<torch::optim::SGDParamState*>(slot.get());
  FT_CHECK(state, "a parameter's optimizer state is not SGD's momentum buffer");
  if (!state->momentum_buffer().defined())
    state->momentum_buffer(at::zeros_like(param, at::MemoryFormat::Preserve));
  return const_cast<at::Tensor&>(state->momentum_buffer());
}

Muon::Muon(const std::vector<torch::optim::OptimizerParamGroup>& groups, const torch::optim::SGDOptions& defaults,
           std::vector<bool> orthogonal, int ns_steps)
    : torch::optim::SGD(groups, defaults), orthogonal_(std::move(orthogonal)), ns_steps_(ns_steps) {
  FT_CHECK(orthogonal_.size() == groups.size(), "Muon: ", groups.size(), " parameter groups but ",
           orthogonal_.size(), " orthogonality flags");
}

// The orthogonal groups step here and hide their gradients while LibTorch's SGD steps the others.
at::Tensor Muon::step(LossClosure closure) {
  FT_CHECK(!closure, "Muon: a closure is not supported");
  std::vector<std::pair<at::Tensor, at::Tensor>> hidden;
  auto& groups = param_groups();
  for (std::size_t g = 0; g < groups.size(); ++g) {
    if (!orthogonal_[g]) continue;
    const auto& o = static_cast<const torch::optim::SGDOptions&>(groups[g].options());
    std::vector<at::Tensor> params, grads, buffers;
    for (const auto& p : groups[g].params()) {
      if (!p.grad().defined()) continue;
      params.push_back(p), grads.push_back(p.grad()), buffers.push_back(momentum_buffer(*this, p));
      hidden.emplace_back(p, p.grad());
    }
    if (params.empty()) continue;
    MuonStep s;
    s.lr = at::scalar_tensor(o.lr(), at::kDouble);
    s.momentum = o.momentum(), s.nesterov = o.nesterov();
    s.ns = newton_schulz_for(params.front(), ns_steps_);
    muon_update(params, grads, buffers, s);
  }
  for (auto& [p, grad] : hidden) p.mutable_grad() = at::Tensor();
  torch::optim::SGD::step();
  for (auto& [p, grad] : hidden) p.mutable_grad() = grad;
  return {};
}

}  // namespace ft
