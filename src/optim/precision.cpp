// Autocast scoping and the loss scaler, built on ATen's AMP kernels (_amp_foreach_non_finite_check_
// and_unscale_, _amp_update_scale_) exactly as torch.amp.GradScaler uses them.
#include "optim/precision.h"

#include <ATen/autocast_mode.h>
#include <torch/nn/modules/batchnorm.h>

#include <map>

#include "runtime/error.h"

namespace ft {

at::ScalarType training_dtype(Precision precision) {
  switch (precision) {
    case Precision::fp16: return at::kHalf;
    case Precision::bf16: return at::kBFloat16;
    case Precision::fp64: return at::kDouble;
    case Precision::fp32: return at::kFloat;
  }
  return at::kFloat;
}

AutocastScope::AutocastScope(at::Device device, at::ScalarType dtype) : device_type_(device.type()) {
  if (dtype != at::kHalf && dtype != at::kBFloat16) return;
  active_ = true;
  previous_enabled_ = at::autocast::is_autocast_enabled(device_type_);
  previous_dtype_ = at::autocast::get_autocast_dtype(device_type_);
  at::autocast::set_autocast_enabled(device_type_, true);
  at::autocast::set_autocast_dtype(device_type_, dtype);
  at::autocast::increment_nesting();
}

AutocastScope::~AutocastScope() {
  if (!active_) return;
  if (at::autocast::decrement_nesting() == 0) at::autocast::clear_cache();
  at::autocast::set_autocast_enabled(device_type_, previous_enabled_);
  at::autocast::set_autocast_dtype(device_type_, previous_dtype_);
}

LossScaler::LossScaler(bool enabled, double initial_scale, int growth_interval, at::Device device, bool keep_scaled)
    : enabled_(enabled), keep_scaled_(keep_scaled), growth_interval_(growth_interval) {
  const auto options = at::TensorOptions().device(device);
  scale_ = at::full({1}, initial_scale, options.dtype(at::kFloat));
  growth_tracker_ = at::zeros({1}, options.dtype(at::kInt));
  found_inf_ = at::zeros({1}, options.dtype(at::kFloat));
}

at::Tensor LossScaler::scale(const at::Tensor& loss) const {
  return enabled_ ? loss * scale_.to(loss.scalar_type()) : loss;
}

bool LossScaler::unscale(const std::vector<at::Tensor>& parameters) {
  if (!enabled_) return true;
  FT_CHECK(!keep_scaled_, "loss scaler: gradients kept scaled (fp16 weights) are unscaled by the fused step only");
  return unscale_on_device(parameters).item<float>() == 0.0f;
}

at::Tensor LossScaler::unscale_on_device(const std::vector<at::Tensor>& parameters) {
  if (!enabled_) return {};
  // One call per gradient type (fp16 weights' and BatchNorm's float32 ones), as GradScaler groups them.
  std::map<at::ScalarType, std::vector<at::Tensor>> grads;
  for (const auto& p : parameters)
    if (p.grad().defined()) grads[p.grad().scalar_type()].push_back(p.grad());
  found_inf_.zero_();
  const at::Tensor factor = keep_scaled_ ? at::ones_like(scale_) : scale_.reciprocal();
  for (auto& [type, same] : grads) at::_amp_foreach_non_finite_check_and_unscale_(same, found_inf_, factor);
  return found_inf_;
}

void LossScaler::update() {
  if (!enabled_) return;
  at::_amp_update_scale_(scale_, growth_tracker_, found_inf_, 2.0, 0.5, growth_interval_);
}

void LossScaler::restore(const at::Tensor& scale, const at::Tensor& growth) {
  scale_.copy_(scale);
  growth_tracker_.copy_(growth);
}

double LossScaler::current_scale() const { return scale_.item<double>(); }

void use_half_weights(torch::nn::Module& module, at::ScalarType dtype) {
  FT_REQUIRE(dtype == at::kHalf || dtype == at::kBFloat16, "precision.half_weights needs precision.dtype fp16 or "
             "bf16, not ", dtype);
  for (const auto& child : module.children()) {
    if (child->as<torch::nn::BatchNorm2dImpl>() || child->as<torch::nn::BatchNorm1dImpl>()) continue;
    use_half_weights(*child, dtype);
  }
  at::NoGradGuard no_grad;
  for (auto& p : module.named_parameters(/*recurse=*/false)) p.value().set_data(p.value().to(dtype));
  for (auto& b : module.named_buffers(/*recurse=*/false))
    if (b.value().is_floating_point()) b.value().set_data(b.value().to(dtype));
}

}  // namespace ft
