// The optimizer step as ATen's fused kernels (_fused_sgd_, _fused_adam_, _fused_adamw_; Muon's filters through
// optim/muon) on LibTorch's own state tensors, and a device flag that skips the step without a host read.
#pragma once

#include <ATen/ATen.h>
#include <torch/optim/optimizer.h>

#include <functional>
#include <map>
#include <memory>
#include <vector>

#include "config/schema.h"

namespace ft {

class FusedStep {
 public:
  // The fused step of `optimizer` (built by make_optimizer from `config`) when `config` and `device` ask for
  // it (optimizer.implementation; auto: on CUDA), else nullptr. Throws when fused is asked for an optimizer
  // ATen has no fused kernel for (rmsprop).
  static std::unique_ptr<FusedStep> make(torch::optim::Optimizer& optimizer, const OptimizerConfig& config,
                                         const at::Device& device);

  // One step of every parameter that has a gradient, with the optimizer's current learning rates. Where
  // `skip` (a one-element float tensor on the parameters' device, or undefined) is non-zero the kernels leave
  // parameters and state as they were: fp16's overflow check decided on the device, never read on the host.
  // Where `grad_scale` (one element, or undefined) is given, the gradients are still multiplied by it (fp16
  // weights keep them scaled): the kernels divide it out in float32.
  void step(const at::Tensor& skip = {}, const at::Tensor& grad_scale = {});
  // Adam and AdamW count their steps on the device (a skipped step does not count); this writes the counts
  // into LibTorch's own state, which checkpoints save (one device read).
  void store_step_counts();
  // The device counts set back, in place, to LibTorch's state (what they are made from): steps whose effect
  // was undone (train.warmup_steps) no longer count.
  void reload_step_counts();
  // Learning rates read by the kernels from device tensors (one per parameter group) instead of passed as
  // arguments, so that a step captured in a CUDA graph follows the schedule; load_rates() copies each group's
  // current rate into its tensor, outside the graph, before the step.
  void use_device_rates();
  void load_rates();

 private:
  FusedStep(torch::optim::Optimizer& optimizer, OptimizerName name);
  // `rate`: the group's device rate (use_device_rates), or nullptr for the group's own lr as an argument.
  void sgd_group(torch::optim::OptimizerParamGroup& group, const at::Tensor* rate,
                 const std::optional<at::Tensor>& skip, const std::optional<at::Tensor>& grad_scale);
  void adam_group(torch::optim::OptimizerParamGroup& group, const at::Tensor* rate,
                  const std::optional<at::Tensor>& skip, const std::optional<at::Tensor>& grad_scale);
  void muon_group(torch::optim::OptimizerParamGroup& group, const at::Tensor* rate, const at::Tensor& skip,
                  const at::Tensor& grad_scale);
  at::Tensor& step_count(const at::Tensor& param, std::int64_t stored);
  void each_step_count(const std::function<void(at::Tensor&, std::int64_t&)>& move);

  torch::optim::Optimizer& optimizer_;
  OptimizerName name_;
  const class Muon* muon_ = nullptr;  // muon: which groups are orthogonal
  std::map<const void*, at::Tensor> steps_;  // per parameter (by TensorImpl): float32 step count on its device
  std::vector<at::Tensor> rates_;  // use_device_rates(): per group, a scalar on the device (float32 on CUDA)
};

}  // namespace ft
