// SyncBatchNorm's arithmetic: the global statistics from one all-reduce in forward, the backward's two per-channel
// sums from another, written with ATen operations that run on the CPU and on GPUs alike; and the communicator.
#include "models/sync_batch_norm.h"

#include <torch/csrc/autograd/custom_function.h>


namespace ft {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// Sums and squares accumulate in float32 (float64 for float64 inputs), as BatchNorm's own kernels do.
at::ScalarType accumulation_type(const at::Tensor& x) { return x.scalar_type() == at::kDouble ? at::kDouble : at::kFloat; }

// Every dimension but the channels (dimension 1).
std::vector<std::int64_t> reduced_dims(const at::Tensor& x) {
  std::vector<std::int64_t> dims{0};
  for (std::int64_t d = 2; d < x.dim(); ++d) dims.push_back(d);
  return dims;
}

// A per-channel vector shaped to broadcast against x: [1, C, 1, ...].
at::Tensor per_channel(const at::Tensor& v, const at::Tensor& x) {
  std::vector<std::int64_t> shape(static_cast<std::size_t>(x.dim()), 1);
  shape[1] = v.numel();
  return v.view(shape);
}

// y = (x - mean) * invstd * weight + bias, in the input's dtype; mean and invstd are the global figures.
struct SyncBatchNormFunction : public torch::autograd::Function<SyncBatchNormFunction> {
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias,
                            const at::Tensor& mean, const at::Tensor& invstd, const at::Tensor& count, NormSync* sync) {
    ctx->save_for_backward({x, weight, mean, invstd, count});
    ctx->saved_data["sync"] = reinterpret_cast<std::int64_t>(sync);
    const at::Tensor scale = invstd * weight.to(invstd.scalar_type());
    const at::Tensor shift = bias.to(invstd.scalar_type()) - mean * scale;
    return (x.to(mean.scalar_type()) * per_channel(scale, x) + per_channel(shift, x)).to(x.scalar_type());
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const at::Tensor &x = saved[0], &weight = saved[1], &mean = saved[2], &invstd = saved[3], &count = saved[4];
    auto* sync = reinterpret_cast<NormSync*>(ctx->saved_data["sync"].toInt());
    const at::ScalarType acc = mean.scalar_type();
    const at::Tensor dy = grads[0].to(acc);
    const at::Tensor xmu = x.to(acc) - per_channel(mean, x);
    const auto dims = reduced_dims(x);
    const at::Tensor sum_dy = dy.sum(dims), sum_dy_xmu = (dy * xmu).sum(dims);
    at::Tensor dx;
    if (ctx->needs_input_grad(0)) {
      at::Tensor sums = at::cat({sum_dy, sum_dy_xmu});
      sync->allreduce(sums, "synchronised BatchNorm backward");
      const std::int64_t c = mean.numel();
      const at::Tensor mean_dy = sums.narrow(0, 0, c) / count, mean_dy_xmu = sums.narrow(0, c, c) / count;
      const at::Tensor scale = invstd * weight.to(acc);
      dx = ((dy - per_channel(mean_dy, x) - xmu * per_channel(invstd * invstd * mean_dy_xmu, x)) * per_channel(scale, x))
               .to(x.scalar_type());
    }
    at::Tensor grad_weight, grad_bias;
    if (ctx->needs_input_grad(1)) grad_weight = (sum_dy_xmu * invstd).to(weight.scalar_type());
    if (ctx->needs_input_grad(2)) grad_bias = sum_dy.to(weight.scalar_type());
    return {dx, grad_weight, grad_bias, at::Tensor(), at::Tensor(), at::Tensor(), at::Tensor()};
  }
};

// The momentum of this step's update of the running statistics, counting the step as LibTorch's forward does.
double update_factor(const NormLayer& layer) {
  double factor = layer.options.momentum().value_or(0.0);
  if (!layer.options.track_running_stats() || !layer.num_batches_tracked.defined()) return factor;
  layer.num_batches_tracked.add_(1);
  if (!layer.options.momentum().has_value()) factor = 1.0 / layer.num_batches_tracked.item<double>();
  return factor;
}

}  // namespace

at::Tensor sync_batch_norm(const at::Tensor& x, const NormLayer& layer, NormSync& sync) {
  at::Tensor mean, invstd, count;
  {
    at::NoGradGuard no_grad;
    const at::Tensor xa = x.detach().to(accumulation_type(x));
    const auto dims = reduced_dims(x);
    const double local = static_cast<double>(x.numel() / std::max<std::int64_t>(1, x.size(1)));
    at::Tensor sums = at::cat({xa.sum(dims), (xa * xa).sum(dims), at::full({1}, local, xa.options())});
    sync.allreduce(sums, "synchronised BatchNorm forward");
    const std::int64_t c = x.size(1);
    count = sums.narrow(0, 2 * c, 1);
    mean = sums.narrow(0, 0, c) / count;
    const at::Tensor var = (sums.narrow(0, c, c) / count - mean * mean).clamp_min(0);  // biased: normalises
    invstd = (var + layer.options.eps()).rsqrt();
    const double factor = update_factor(layer);
    if (layer.options.track_running_stats() && layer.running_mean.defined()) {
      const at::Tensor unbiased = var * count / (count - 1).clamp_min(1);  // the running variance's estimate
      layer.running_mean.mul_(1 - factor).add_(mean.to(layer.running_mean.scalar_type()), factor);
      layer.running_var.mul_(1 - factor).add_(unbiased.to(layer.running_var.scalar_type()), factor);
    }
  }
  // Without affine parameters, a scale of 1 and a shift of 0 that need no gradient (autograd takes no undefined
  // tensor as an input).
  const at::Tensor weight = layer.weight.defined() ? layer.weight : at::ones_like(mean);
  const at::Tensor bias = layer.bias.defined() ? layer.bias : at::zeros_like(mean);
  return SyncBatchNormFunction::apply(x, weight, bias, mean, invstd, count, &sync);
}

int synchronize_batch_norms(torch::nn::Module& module, const std::shared_ptr<NormSync>& sync) {
  int layers = 0;
  for (const auto& m : module.modules(/*include_self=*/false)) {
    if (auto* norm = dynamic_cast<SyncedNorm*>(m.get())) {
      norm->synchronize_with(sync);
      ++layers;
    }
  }
  return layers;
}

std::vector<at::Tensor> batch_norm_buffers(torch::nn::Module& module) {
  std::vector<at::Tensor> out;
  const auto add = [&out](const auto& norm) {
    for (const at::Tensor& t : {norm.running_mean, norm.running_var, norm.num_batches_tracked})
      if (t.defined()) out.push_back(t);
  };
  for (const auto& m : module.modules(/*include_self=*/false)) {
    if (const auto* bn2 = m->as<torch::nn::BatchNorm2dImpl>()) add(*bn2);
    if (const auto* bn1 = m->as<torch::nn::BatchNorm1dImpl>()) add(*bn1);
  }
  return out;
}

}  // namespace ft
