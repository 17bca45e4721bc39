// MaxPool2x2Function: the autograd wrapper of kernels/max_pool. CUDA tensors go to the kernels on the current
// stream; CPU tensors to the reference, in float32 (float64 for float64 input), converted back after.
#include "models/max_pool.h"

#include <ATen/record_function.h>
#include <c10/core/DeviceGuard.h>
#include <torch/csrc/autograd/custom_function.h>

#include <vector>

#include "kernels/max_pool.h"
#include "models/kernel_tensors.h"
#include "runtime/error.h"

namespace ft {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

constexpr const char* kOp = "max-pool 2x2";

MaxPoolShape pool_shape_of(at::IntArrayRef sizes, bool channels_last) {
  MaxPoolShape s;
  s.batch = sizes[0], s.channels = sizes[1], s.height = sizes[2], s.width = sizes[3];
  s.channels_last = channels_last;
  return s;
}

// The pooled map of x (already a kernel_map) and, when `keep`, each window's position.
std::pair<at::Tensor, at::Tensor> pool_forward(const at::Tensor& x, const MaxPoolShape& s, bool keep) {
  const auto options = x.options().memory_format(map_memory_format(s.channels_last));
  const at::Tensor y = at::empty({s.batch, s.channels, s.height / 2, s.width / 2}, options);
  const at::Tensor argmax = keep ? at::empty(y.sizes(), options.dtype(at::kByte)) : at::Tensor();
  auto* positions = data_or_null<std::uint8_t>(argmax);
  if (x.is_cuda()) {
    const c10::DeviceGuard guard(x.device());
    max_pool2_forward_device(kernel_map_type(x, kOp), x.data_ptr(), y.data_ptr(), positions, s, current_cuda_stream(x));
  } else if (x.scalar_type() == at::kDouble) {
    max_pool2_forward_cpu(x.data_ptr<double>(), y.data_ptr<double>(), positions, s);
  } else {
    max_pool2_forward_cpu(x.data_ptr<float>(), y.data_ptr<float>(), positions, s);
  }
  return {y, argmax};
}

at::Tensor pool_backward(const at::Tensor& grad_y, const at::Tensor& argmax, const MaxPoolShape& s) {
  const at::Tensor grad_x = at::empty({s.batch, s.channels, s.height, s.width},
                                      grad_y.options().memory_format(map_memory_format(s.channels_last)));
  const auto* positions = argmax.data_ptr<std::uint8_t>();
  if (grad_y.is_cuda()) {
    const c10::DeviceGuard guard(grad_y.device());
    max_pool2_backward_device(kernel_map_type(grad_y, kOp), grad_y.data_ptr(), positions, grad_x.data_ptr(), s,
                              current_cuda_stream(grad_y));
  } else if (grad_y.scalar_type() == at::kDouble) {
    max_pool2_backward_cpu(grad_y.data_ptr<double>(), positions, grad_x.data_ptr<double>(), s);
  } else {
    max_pool2_backward_cpu(grad_y.data_ptr<float>(), positions, grad_x.data_ptr<float>(), s);
  }
  return grad_x;
}

MaxPoolShape pool_shape_of(const at::Tensor& x) {
  return pool_shape_of(x.sizes(), x.suggest_memory_format() == at::MemoryFormat::ChannelsLast);
}

struct MaxPool2x2Function : public torch::autograd::Function<MaxPool2x2Function> {
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& x) {
    const MaxPoolShape s = pool_shape_of(x);
    const auto [y, argmax] = pool_forward(kernel_map(x, s.channels_last), s, true);
    ctx->save_for_backward({argmax});
    ctx->saved_data["sizes"] = x.sizes().vec();
    ctx->saved_data["channels_last"] = s.channels_last;
    return y.to(x.scalar_type());
  }

  static variable_list backward(AutogradContext* ctx, variable_list grad_outputs) {
    const MaxPoolShape s =
        pool_shape_of(ctx->saved_data["sizes"].toIntVector(), ctx->saved_data["channels_last"].toBool());
    const at::Tensor& grad = grad_outputs[0];
    return {pool_backward(kernel_map(grad, s.channels_last), ctx->get_saved_variables()[0], s).to(grad.scalar_type())};
  }
};

}  // namespace

at::Tensor max_pool2x2(const at::Tensor& x) {
  FT_REQUIRE(x.dim() == 4, kOp, ": the input must be 4-d [N, C, H, W], not ", x.sizes());
  const std::vector<c10::IValue> inputs{x};
  RECORD_FUNCTION("ft::max_pool2x2", inputs);
  if (at::GradMode::is_enabled() && x.requires_grad()) return MaxPool2x2Function::apply(x);
  const MaxPoolShape s = pool_shape_of(x);
  return pool_forward(kernel_map(x, s.channels_last), s, false).first.to(x.scalar_type());
}

}  // namespace ft
