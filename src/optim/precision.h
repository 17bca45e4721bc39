// Mixed precision: an autocast scope for fp16/bf16 forward passes, and dynamic loss scaling for fp16
// with GradScaler semantics (skip the step on inf/NaN and back off; grow after N clean steps).
#pragma once

#include <ATen/ATen.h>
#include <torch/nn/module.h>

#include <vector>

#include "config/choices.h"

namespace ft {

// Enables autocast to `dtype` on `device` for its lifetime (no-op for fp32/fp64).
class AutocastScope {
 public:
  AutocastScope(at::Device device, at::ScalarType dtype);
  ~AutocastScope();
  AutocastScope(const AutocastScope&) = delete;
  AutocastScope& operator=(const AutocastScope&) = delete;

 private:
  at::DeviceType device_type_;
  bool active_ = false, previous_enabled_ = false;
  at::ScalarType previous_dtype_ = at::kFloat;
};

// With `keep_scaled` (fp16 weights, whose fp16 gradients would lose their small values if divided in place)
// the gradients are only checked for inf/NaN, never divided: the fused optimizer step takes grad_scale() and
// divides in float32.
class LossScaler {
 public:
  LossScaler(bool enabled, double initial_scale, int growth_interval, at::Device device, bool keep_scaled = false);
  bool enabled() const { return enabled_; }
  at::Tensor scale(const at::Tensor& loss) const;
  // Divides the gradients by the scale in place; returns false when any is inf/NaN (skip the step). Refused
  // with keep_scaled.
  bool unscale(const std::vector<at::Tensor>& parameters);
  // The same on the device alone: the returned one-element tensor is non-zero when the step must be skipped
  // (undefined when scaling is off); nothing is read on the host. With keep_scaled: the check alone.
  at::Tensor unscale_on_device(const std::vector<at::Tensor>& parameters);
  // The scale the gradients still carry after unscale_on_device (keep_scaled), else undefined.
  at::Tensor grad_scale() const { return enabled_ && keep_scaled_ ? scale_ : at::Tensor(); }
  // Backs off after an overflow, grows after growth_interval clean steps.
  void update();
  double current_scale() const;
  // For checkpoints: the scale and growth-tracker tensors, and their restoration.
  const at::Tensor& scale_state() const { return scale_; }
  const at::Tensor& growth_state() const { return growth_tracker_; }
  void restore(const at::Tensor& scale, const at::Tensor& growth);

 private:
  bool enabled_, keep_scaled_;
  int growth_interval_;
  at::Tensor scale_, growth_tracker_, found_inf_;
};

at::ScalarType training_dtype(Precision precision);  // fp16 -> kHalf, bf16 -> kBFloat16, ...

// precision.half_weights: every parameter and buffer of `module` in `dtype` (fp16 or bf16), except those of
// its BatchNorm layers, which stay float32 (their statistics and the normalisation's arithmetic need it).
void use_half_weights(torch::nn::Module& module, at::ScalarType dtype);

}  // namespace ft
