// Fused optimizer steps over LibTorch's state: SGD's momentum buffers and Adam's averages stay in
// SGDParamState / AdamParamState (so checkpoints save them as before); state missing on a first step is made
// as LibTorch would make it, with zeros (identical results: the optimizers have no dampening).
#include "optim/fused_step.h"

#include <torch/optim/adam.h>
#include <torch/optim/adamw.h>
#include <torch/optim/sgd.h>

#include "optim/muon.h"
#include "runtime/error.h"

namespace ft {
namespace {

template <typename State>
State& param_state(torch::optim::Optimizer& optimizer, const at::Tensor& param) {
  auto& slot = optimizer.state()[param.unsafeGetTensorImpl()];
  if (!slot) slot = std::make_unique<State>();
  auto* state = dynamic_cast<State*>(slot.get());
  FT_CHECK(state, "fused step: a parameter's optimizer state is of another optimizer");
  return *state;
}

at::Tensor zeros_if_undefined(const at::Tensor& t, const at::Tensor& like) {
  return t.defined() ? t : at::zeros_like(like, at::MemoryFormat::Preserve);
}

// Adam and AdamW share the state and the kernel's signature; the options differ in type only.
template <typename Options>
void adam_options(const torch::optim::OptimizerOptions& options, double& lr, double& beta1, double& beta2,
                  double& eps, double& decay, bool& amsgrad) {
  const auto& o = static_cast<const Options&>(options);
  lr = o.lr(), beta1 = std::get<0>(o.betas()), beta2 = std::get<1>(o.betas()), eps = o.eps();
  decay = o.weight_decay(), amsgrad = o.amsgrad();
}

}  // namespace

std::unique_ptr<FusedStep> FusedStep::make(torch::optim::Optimizer& optimizer, const OptimizerConfig& config,
                                           const at::Device& device) {
  const bool fusable = config.name != OptimizerName::rmsprop;
  switch (config.implementation) {
    case OptimizerImplementation::per_tensor: return nullptr;
    case OptimizerImplementation::automatic:
      if (!device.is_cuda() || !fusable) return nullptr;
      break;
    case OptimizerImplementation::fused:
      FT_REQUIRE(fusable, "optimizer.implementation 'fused': ATen has no fused kernel for optimizer '",
                 config.name, "'; use sgd, adam or adamw, or optimizer.implementation: per_tensor");
      break;
  }
  // ATen's CPU kernels (torch 2.11) leave the vectorised part of a float16/bfloat16 parameter unchanged.
  for (const auto& group : optimizer.param_groups())
    for (const auto& p : group.params())
      FT_REQUIRE(device.is_cuda() || (p.scalar_type() != at::kHalf && p.scalar_type() != at::kBFloat16),
                 "the fused optimizer step takes float16 and bfloat16 parameters (precision.half_weights) on CUDA "
                 "only: ATen's CPU kernels leave most of such a parameter unchanged; use optimizer.implementation "
                 "per_tensor (or auto) on the CPU");
  return std::unique_ptr<FusedStep>(new FusedStep(optimizer, config.name));
}

FusedStep::FusedStep(torch::optim::Optimizer& optimizer, OptimizerName name) : optimizer_(optimizer), name_(name) {
  if (name_ != OptimizerName::muon) return;
  muon_ = dynamic_cast<const Muon*>(&optimizer);
  FT_CHECK(muon_, "fused step: optimizer 'muon' but the optimizer is not ft::Muon");
}

void FusedStep::step(const at::Tensor& skip, const at::Tensor& grad_scale) {
  const auto optional = [](const at::Tensor& t) { return t.defined() ? std::optional<at::Tensor>(t) : std::nullopt; };
  const std::optional<at::Tensor> found_inf = optional(skip), scale = optional(grad_scale);
  auto& groups = optimizer_.param_groups();
  for (std::size_t g = 0; g < groups.size(); ++g) {
    const at::Tensor* rate = rates_.empty() ? nullptr : &rates_[g];
    if (muon_ && muon_->orthogonal(g))
      muon_group(groups[g], rate, skip, grad_scale);
    else if (name_ == OptimizerName::sgd || name_ == OptimizerName::muon)
      sgd_group(groups[g], rate, found_inf, scale);
    else
      adam_group(groups[g], rate, found_inf, scale);
  }
}

void FusedStep::muon_group(torch::optim::OptimizerParamGroup& group, const at::Tensor* rate, const at::Tensor& skip,
                           const at::Tensor& grad_scale) {
  const auto& o = static_cast<const torch::optim::SGDOptions&>(group.options());
  std::vector<at::Tensor> params, grads, buffers;
  for (const auto& p : group.params()) {
    if (!p.grad().defined()) continue;
    params.push_back(p), grads.push_back(p.grad()), buffers.push_back(momentum_buffer(optimizer_, p));
  }
  if (params.empty()) return;
  MuonStep s;
  s.lr = rate ? *rate : at::scalar_tensor(o.lr(), at::kDouble);
  s.momentum = o.momentum(), s.nesterov = o.nesterov();
  s.ns = newton_schulz_for(params.front(), muon_->ns_steps());
  s.skip = skip, s.grad_scale = grad_scale;
  muon_update(params, grads, buffers, s);
}

void FusedStep::sgd_group(torch::optim::OptimizerParamGroup& group, const at::Tensor* rate,
                          const std::optional<at::Tensor>& skip, const std::optional<at::Tensor>& grad_scale) {
  const auto& o = static_cast<const torch::optim::SGDOptions&>(group.options());
  FT_CHECK(o.dampening() == 0, "fused SGD: dampening is not supported");
  std::vector<at::Tensor> params, grads, buffers;
  for (const auto& p : group.params()) {
    if (!p.grad().defined()) continue;
    params.push_back(p);
    grads.push_back(p.grad());
    if (o.momentum() != 0) buffers.push_back(momentum_buffer(optimizer_, p));
  }
  if (params.empty()) return;
  at::NoGradGuard no_grad;
  const auto run = [&](const auto& lr) {
    at::_fused_sgd_(params, grads, buffers, o.weight_decay(), o.momentum(), lr, o.dampening(), o.nesterov(),
                    /*maximize=*/false, /*is_first_step=*/false, grad_scale, skip);
  };
  if (rate)
    run(*rate);
  else
    run(o.lr());
}

at::Tensor& FusedStep::step_count(const at::Tensor& param, std::int64_t stored) {
  auto& count = steps_[param.unsafeGetTensorImpl()];
  if (!count.defined()) count = at::full({}, static_cast<double>(stored), param.options().dtype(at::kFloat));
  return count;
}

void FusedStep::adam_group(torch::optim::OptimizerParamGroup& group, const at::Tensor* rate,
                           const std::optional<at::Tensor>& skip, const std::optional<at::Tensor>& grad_scale) {
  double lr, beta1, beta2, eps, decay;
  bool amsgrad;
  const bool decoupled = name_ == OptimizerName::adamw;
  if (decoupled)
    adam_options<torch::optim::AdamWOptions>(group.options(), lr, beta1, beta2, eps, decay, amsgrad);
  else
    adam_options<torch::optim::AdamOptions>(group.options(), lr, beta1, beta2, eps, decay, amsgrad);
  std::vector<at::Tensor> params, grads, averages, squares, maxima, counts;
  for (const auto& p : group.params()) {
    if (!p.grad().defined()) continue;
    // AdamW's state is AdamParamState's twin; both hold the same four things.
    auto fill = [&](auto& state) {
      state.exp_avg(zeros_if_undefined(state.exp_avg(), p));
      state.exp_avg_sq(zeros_if_undefined(state.exp_avg_sq(), p));
      if (amsgrad) state.max_exp_avg_sq(zeros_if_undefined(state.max_exp_avg_sq(), p)), maxima.push_back(state.max_exp_avg_sq());
      averages.push_back(state.exp_avg());
      squares.push_back(state.exp_avg_sq());
      counts.push_back(step_count(p, state.step()));
    };
    if (decoupled)
      fill(param_state<torch::optim::AdamWParamState>(optimizer_, p));
    else
      fill(param_state<torch::optim::AdamParamState>(optimizer_, p));
    params.push_back(p);
    grads.push_back(p.grad());
  }
  if (params.empty()) return;
  at::NoGradGuard no_grad;
  at::_foreach_add_(counts, 1);
  const auto run = [&](const auto& step_lr) {
    if (decoupled)
      at::_fused_adamw_(params, grads, averages, squares, maxima, counts, step_lr, beta1, beta2, decay, eps,
                        amsgrad, /*maximize=*/false, grad_scale, skip);
    else
      at::_fused_adam_(params, grads, averages, squares, maxima, counts, step_lr, beta1, beta2, decay, eps, amsgrad,
                       /*maximize=*/false, grad_scale, skip);
  };
  if (rate)
    run(*rate);
  else
    run(lr);
  // A skipped step does not count (the counts are 0-dimensional, the flag has one element).
  if (skip) at::_foreach_sub_(counts, std::vector<at::Tensor>(counts.size(), skip->reshape({})));
}

void FusedStep::use_device_rates() {
  rates_.clear();
  for (auto& group : optimizer_.param_groups()) {
    const auto& params = group.params();
    const auto device = params.empty() ? at::Device(at::kCPU) : params.front().device();
    // CUDA's fused kernels read the rate as float32; the CPU kernel reads a double, so a CPU replay of a graphed
    // step (its test seam) gets the very bits the eager step passes as an argument.
    const auto dtype = device.is_cuda() ? at::kFloat : at::kDouble;
    rates_.push_back(at::zeros({}, at::TensorOptions().device(device).dtype(dtype)));
  }
  load_rates();
}

void FusedStep::load_rates() {
  auto& groups = optimizer_.param_groups();
  FT_CHECK(rates_.size() == groups.size(), "fused step: the parameter groups changed after use_device_rates()");
  for (std::size_t g = 0; g < groups.size(); ++g) rates_[g].fill_(groups[g].options().get_lr());
}

// `move` with every parameter's device count and LibTorch's stored step of it, which it may change either way
// (Adam and AdamW count steps; SGD and Muon do not).
void FusedStep::each_step_count(const std::function<void(at::Tensor&, std::int64_t&)>& move) {
  if (name_ == OptimizerName::sgd || name_ == OptimizerName::muon) return;
  for (auto& group : optimizer_.param_groups())
    for (const auto& p : group.params()) {
      const auto it = steps_.find(p.unsafeGetTensorImpl());
      if (it == steps_.end()) continue;
      const auto with = [&](auto& state) {
        std::int64_t stored = state.step();
        move(it->second, stored);
        state.step(stored);
      };
      if (name_ == OptimizerName::adamw)
        with(param_state<torch::optim::AdamWParamState>(optimizer_, p));
      else
        with(param_state<torch::optim::AdamParamState>(optimizer_, p));
    }
}

void FusedStep::reload_step_counts() {
  each_step_count([](at::Tensor& count, std::int64_t& stored) { count.fill_(static_cast<double>(stored)); });
}

void FusedStep::store_step_counts() {
  each_step_count([](at::Tensor& count, std::int64_t& stored) {
    stored = static_cast<std::int64_t>(count.item<float>());
  });
}

}  // namespace ft
