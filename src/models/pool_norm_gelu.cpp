// PoolNormGeluFunction: the autograd wrapper of kernels/pool_norm_gelu. CUDA tensors go to the kernels on the
// current stream; CPU tensors to the reference, in float32 (float64 for float64 input), converted back after.
#include "models/pool_norm_gelu.h"

#include <ATen/record_function.h>
#include <c10/core/DeviceGuard.h>
#include <torch/csrc/autograd/custom_function.h>

#include <optional>
#include <vector>

#include "kernels/pool_norm_gelu.h"
#include "models/kernel_tensors.h"
#include "models/max_pool.h"
#include "runtime/error.h"

namespace ft {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

PoolNormShape shape_of(at::IntArrayRef sizes, int pool, bool channels_last) {
  PoolNormShape s;
  s.batch = sizes[0], s.channels = sizes[1], s.height = sizes[2], s.width = sizes[3];
  s.pool = pool;
  s.channels_last = channels_last;
  return s;
}

// The per-channel values' type: float32 on CUDA, the arithmetic's on the CPU.
at::ScalarType channel_type(const at::Tensor& x) { return x.is_cuda() ? at::kFloat : kernel_compute_type(x); }

at::Tensor per_channel(const at::Tensor& t, at::ScalarType type) {
  return t.defined() ? t.detach().to(type).contiguous() : t;
}

at::Tensor workspace_for(const at::Tensor& like, const PoolNormShape& s) {
  return at::empty({pool_norm_workspace(s)}, like.options().dtype(at::kDouble));
}

// What forward makes and backward reads.
struct Maps {
  at::Tensor input, y, pooled, argmax, weight, bias, running_mean, running_var, mean, invstd;
};

template <typename T, typename P>
PoolNormForwardArgs<T, P> forward_args(const Maps& m) {
  PoolNormForwardArgs<T, P> f;
  f.x = data_or_null<const T>(m.input), f.y = data_or_null<T>(m.y);
  if (m.argmax.defined()) f.pooled = data_or_null<T>(m.pooled), f.argmax = data_or_null<std::uint8_t>(m.argmax);
  f.weight = data_or_null<const P>(m.weight), f.bias = data_or_null<const P>(m.bias);
  f.running_mean = data_or_null<P>(m.running_mean), f.running_var = data_or_null<P>(m.running_var);
  f.mean = data_or_null<P>(m.mean), f.invstd = data_or_null<P>(m.invstd);
  return f;
}

void run_forward(const Maps& m, const PoolNormShape& s, const NormSettings& n) {
  if (m.input.is_cuda()) {
    const c10::DeviceGuard guard(m.input.device());
    pool_norm_gelu_forward_device(kernel_map_type(m.input, "pool+norm+GELU"), forward_args<void, float>(m),
                                  workspace_for(m.input, s).data_ptr<double>(), s, n, current_cuda_stream(m.input));
  } else if (m.input.scalar_type() == at::kDouble) {
    pool_norm_gelu_forward_cpu(forward_args<double, double>(m), s, n);
  } else {
    pool_norm_gelu_forward_cpu(forward_args<float, float>(m), s, n);
  }
}

// Forward's maps and per-channel tensors, the running statistics in the kernels' type (aliases of the layer's
// buffers where those already are).
Maps forward_maps(const at::Tensor& x, const PoolNormArgs& a, const PoolNormShape& s) {
  Maps m;
  const at::ScalarType channels = channel_type(x);
  m.input = kernel_map(x, s.channels_last);
  m.pooled = m.input;
  if (s.pool == 2) {
    const auto options = m.input.options().memory_format(map_memory_format(s.channels_last));
    m.pooled = at::empty({s.batch, s.channels, pooled_height(s), pooled_width(s)}, options);
    m.argmax = at::empty(m.pooled.sizes(), options.dtype(at::kByte));
  }
  m.y = at::empty_like(m.pooled);
  m.weight = per_channel(a.weight, channels), m.bias = per_channel(a.bias, channels);
  m.running_mean = per_channel(a.running_mean, channels), m.running_var = per_channel(a.running_var, channels);
  m.mean = at::empty({s.channels}, m.input.options().dtype(channels));
  m.invstd = at::empty_like(m.mean);
  return m;
}

void copy_back(const at::Tensor& statistic, const at::Tensor& buffer) {
  if (buffer.defined() && !statistic.is_alias_of(buffer)) buffer.detach().copy_(statistic);
}

template <typename T, typename P>
PoolNormBackwardArgs<T, P> backward_args(const Maps& m, const at::Tensor& grad_y, const at::Tensor& grad_x,
                                         const at::Tensor& grad_weight, const at::Tensor& grad_bias) {
  PoolNormBackwardArgs<T, P> b;
  b.grad_y = data_or_null<const T>(grad_y), b.pooled = data_or_null<const T>(m.pooled);
  b.argmax = data_or_null<const std::uint8_t>(m.argmax);
  b.weight = data_or_null<const P>(m.weight), b.bias = data_or_null<const P>(m.bias);
  b.mean = data_or_null<const P>(m.mean), b.invstd = data_or_null<const P>(m.invstd);
  b.grad_x = data_or_null<T>(grad_x), b.grad_weight = data_or_null<P>(grad_weight);
  b.grad_bias = data_or_null<P>(grad_bias);
  return b;
}

struct Grads {
  at::Tensor x, weight, bias;
};

void run_backward(const Maps& m, const at::Tensor& grad_y, const Grads& g, const PoolNormShape& s, bool training) {
  if (grad_y.is_cuda()) {
    const c10::DeviceGuard guard(grad_y.device());
    pool_norm_gelu_backward_device(kernel_map_type(grad_y, "pool+norm+GELU"),
                                   backward_args<void, float>(m, grad_y, g.x, g.weight, g.bias),
                                   workspace_for(grad_y, s).data_ptr<double>(), s, training,
                                   current_cuda_stream(grad_y));
  } else if (grad_y.scalar_type() == at::kDouble) {
    pool_norm_gelu_backward_cpu(backward_args<double, double>(m, grad_y, g.x, g.weight, g.bias), s, training);
  } else {
    pool_norm_gelu_backward_cpu(backward_args<float, float>(m, grad_y, g.x, g.weight, g.bias), s, training);
  }
}

struct PoolNormGeluFunction : public torch::autograd::Function<PoolNormGeluFunction> {
  // weight and bias are optional because autograd cannot record an undefined tensor as an input.
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& x, const std::optional<at::Tensor>& weight,
                            const std::optional<at::Tensor>& bias, const PoolNormArgs& a) {
    const PoolNormShape s = shape_of(x.sizes(), a.pool, x.suggest_memory_format() == at::MemoryFormat::ChannelsLast);
    const NormSettings n{a.momentum, a.eps, a.training || !a.running_mean.defined()};
    const Maps m = forward_maps(x, {weight.value_or(at::Tensor()), bias.value_or(at::Tensor()), a.running_mean,
                                    a.running_var, a.momentum, a.eps, a.training, a.pool},
                                s);
    run_forward(m, s, n);
    if (n.training) copy_back(m.running_mean, a.running_mean), copy_back(m.running_var, a.running_var);
    ctx->save_for_backward({m.pooled, m.argmax, m.weight, m.bias, m.mean, m.invstd});
    ctx->saved_data["sizes"] = x.sizes().vec();
    ctx->saved_data["pool"] = static_cast<std::int64_t>(a.pool);
    ctx->saved_data["channels_last"] = s.channels_last;
    ctx->saved_data["training"] = n.training;
    return m.y.to(x.scalar_type());
  }

  static variable_list backward(AutogradContext* ctx, variable_list grad_outputs) {
    const auto saved = ctx->get_saved_variables();
    Maps m;
    m.pooled = saved[0], m.argmax = saved[1], m.weight = saved[2], m.bias = saved[3], m.mean = saved[4];
    m.invstd = saved[5];
    const PoolNormShape s = shape_of(ctx->saved_data["sizes"].toIntVector(),
                                     static_cast<int>(ctx->saved_data["pool"].toInt()),
                                     ctx->saved_data["channels_last"].toBool());
    const at::Tensor grad_y = grad_outputs[0].to(m.pooled.scalar_type()).contiguous(map_memory_format(s.channels_last));
    Grads g;
    const auto per_channel_grad = [&](bool needed) { return needed ? at::empty_like(m.mean) : at::Tensor(); };
    if (ctx->needs_input_grad(0))
      g.x = at::empty({s.batch, s.channels, s.height, s.width},
                      grad_y.options().memory_format(map_memory_format(s.channels_last)));
    g.weight = per_channel_grad(ctx->needs_input_grad(1)), g.bias = per_channel_grad(ctx->needs_input_grad(2));
    run_backward(m, grad_y, g, s, ctx->saved_data["training"].toBool());
    const auto like = [](const at::Tensor& grad, const at::Tensor& of) { return grad.defined() ? grad.to(of.scalar_type()) : grad; };
    return {like(g.x, grad_outputs[0]), g.weight, g.bias, at::Tensor()};
  }
};

}  // namespace

at::Tensor fused_pool_norm_gelu(const at::Tensor& x, const PoolNormArgs& args) {
  FT_REQUIRE(x.dim() == 4, "pool+norm+GELU: the input must be 4-d [N, C, H, W], not ", x.sizes());
  for (const at::Tensor* t : {&args.weight, &args.bias, &args.running_mean, &args.running_var})
    FT_REQUIRE(!t->defined() || (t->dim() == 1 && t->size(0) == x.size(1) && t->device() == x.device()),
               "pool+norm+GELU: BatchNorm's tensors must hold one value per channel (", x.size(1), ") on ",
               x.device());
  FT_REQUIRE(args.running_mean.defined() == args.running_var.defined(),
             "pool+norm+GELU: the running mean and variance come together");
  FT_REQUIRE(!x.is_cuda() || x.scalar_type() != at::kDouble, "pool+norm+GELU: the CUDA kernels take float32, "
             "float16 or bfloat16, not float64");
  const auto optional = [](const at::Tensor& t) { return t.defined() ? std::optional<at::Tensor>(t) : std::nullopt; };
  const std::vector<c10::IValue> inputs{x};
  RECORD_FUNCTION("ft::pool_norm_gelu", inputs);
  return PoolNormGeluFunction::apply(x, optional(args.weight), optional(args.bias), args);
}

bool fuses_pool_norm_gelu(PoolNormGeluKernel kernel, bool synchronized) {
  return kernel == PoolNormGeluKernel::fused && !synchronized;
}

at::Tensor pool_norm_gelu(const at::Tensor& x, SyncBatchNorm2dImpl& norm, int pool, PoolNormGeluKernel kernel) {
  if (!fuses_pool_norm_gelu(kernel, norm.synchronized())) {
    if (pool == 1) return at::gelu(norm.forward(x));
    return at::gelu(norm.forward(kernel == PoolNormGeluKernel::pool ? max_pool2x2(x) : at::max_pool2d(x, 2)));
  }
  const auto& o = norm.options;
  FT_REQUIRE(o.momentum().has_value(), "pool+norm+GELU: BatchNorm with a cumulative average (momentum None) is not "
             "supported by the fused kernels");
  const bool training = norm.is_training();
  if (training && o.track_running_stats()) norm.num_batches_tracked.add_(1);
  const bool tracked = o.track_running_stats();
  return fused_pool_norm_gelu(x, {norm.weight, norm.bias, tracked ? norm.running_mean : at::Tensor(),
                                  tracked ? norm.running_var : at::Tensor(), *o.momentum(), o.eps(), training, pool});
}

}  // namespace ft
