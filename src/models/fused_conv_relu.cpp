// FusedConvReLUFunction: the autograd wrapper of kernels/conv_relu. Forward saves input, weight and
// output (whose sign is the ReLU mask); backward masks the incoming gradient and reuses ATen's convolution backward.
#include "models/fused_conv_relu.h"

#include <ATen/ATen.h>
#include <ATen/DeviceAccelerator.h>
#include <ATen/autocast_mode.h>
#include <ATen/record_function.h>
#include <c10/core/DeviceGuard.h>
#include <torch/csrc/autograd/custom_function.h>

#include <optional>
#include <vector>

#include "kernels/conv_relu.h"
#include "runtime/error.h"

namespace ft {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

ConvGeometry geometry_of(const at::Tensor& x, const at::Tensor& weight, const std::vector<int64_t>& stride,
                         const std::vector<int64_t>& padding) {
  ConvGeometry g;
  g.batch = static_cast<int>(x.size(0));
  g.in_channels = static_cast<int>(x.size(1));
  g.height = static_cast<int>(x.size(2));
  g.width = static_cast<int>(x.size(3));
  g.out_channels = static_cast<int>(weight.size(0));
  g.kernel_h = static_cast<int>(weight.size(2));
  g.kernel_w = static_cast<int>(weight.size(3));
  g.stride_h = static_cast<int>(stride[0]);
  g.stride_w = static_cast<int>(stride[1]);
  g.pad_h = static_cast<int>(padding[0]);
  g.pad_w = static_cast<int>(padding[1]);
  check_conv_geometry(g);
  return g;
}

template <typename T>
const T* optional_data(const at::Tensor& t) {
  return t.defined() ? t.data_ptr<T>() : nullptr;
}

// Runs the kernel or the CPU reference on contiguous tensors; returns the post-ReLU output.
at::Tensor conv_bias_relu(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias,
                          const std::vector<int64_t>& stride, const std::vector<int64_t>& padding) {
  const ConvGeometry g = geometry_of(x, weight, stride, padding);
  at::Tensor y = at::empty({g.batch, g.out_channels, conv_out_height(g), conv_out_width(g)}, x.options());
  if (x.is_cuda()) {
    FT_REQUIRE(x.scalar_type() == at::kFloat, "fused conv+ReLU: the CUDA kernel takes float32 tensors, not ",
               x.scalar_type());
    const c10::DeviceGuard guard(x.device());
    const c10::Stream current = at::accelerator::getCurrentStream(x.device().index());
    const auto stream = static_cast<cudaStream_t>(current.native_handle());
    conv_bias_relu_device(x.data_ptr<float>(), weight.data_ptr<float>(), optional_data<float>(bias),
                          y.data_ptr<float>(), g, stream);
  } else if (x.scalar_type() == at::kFloat) {
    conv_bias_relu_cpu(x.data_ptr<float>(), weight.data_ptr<float>(), optional_data<float>(bias), y.data_ptr<float>(),
                       g);
  } else if (x.scalar_type() == at::kDouble) {
    conv_bias_relu_cpu(x.data_ptr<double>(), weight.data_ptr<double>(), optional_data<double>(bias),
                       y.data_ptr<double>(), g);
  } else {
    throw Error(cat("fused conv+ReLU: the CPU reference takes float32 or float64 tensors, not ", x.scalar_type()));
  }
  return y;
}

struct FusedConvReLUFunction : public torch::autograd::Function<FusedConvReLUFunction> {
  // bias is optional because autograd cannot record an undefined tensor as an input.
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& x, const at::Tensor& weight,
                            const std::optional<at::Tensor>& bias, std::vector<int64_t> stride,
                            std::vector<int64_t> padding) {
    const at::Tensor y =
        conv_bias_relu(x.contiguous(), weight.contiguous(), bias ? bias->contiguous() : at::Tensor(), stride, padding);
    ctx->save_for_backward({x, weight, y});
    ctx->saved_data["stride"] = stride;
    ctx->saved_data["padding"] = padding;
    ctx->saved_data["has_bias"] = bias.has_value();
    return y;
  }

  static variable_list backward(AutogradContext* ctx, variable_list grad_outputs) {
    const auto saved = ctx->get_saved_variables();
    const at::Tensor &x = saved[0], &weight = saved[1], &y = saved[2];
    const at::Tensor grad = grad_outputs[0] * (y > 0);
    const std::vector<int64_t> stride = ctx->saved_data["stride"].toIntVector();
    const std::vector<int64_t> padding = ctx->saved_data["padding"].toIntVector();
    const std::vector<int64_t> dilation = {1, 1}, output_padding = {0, 0};
    auto [grad_x, grad_weight, unused_bias] =
        at::convolution_backward(grad, x, weight, std::nullopt, stride, padding, dilation, false, output_padding, 1,
                                 {ctx->needs_input_grad(0), ctx->needs_input_grad(1), false});
    const at::Tensor grad_bias = ctx->saved_data["has_bias"].toBool() && ctx->needs_input_grad(2)
                                     ? grad.sum({0, 2, 3})
                                     : at::Tensor();
    return {grad_x, grad_weight, grad_bias, at::Tensor(), at::Tensor()};
  }
};

// Under autocast the layer runs in float32, as autocast's float32 operations do (the kernel and its CPU
// reference take float32): half or bfloat16 tensors are cast up, so the layer's output is float32 and the
// next layer casts down again. Outside autocast the dtypes must already agree.
at::Tensor autocast_to_float(const at::Tensor& t) {
  if (!t.defined() || (t.scalar_type() != at::kHalf && t.scalar_type() != at::kBFloat16)) return t;
  return at::autocast::is_autocast_enabled(t.device().type()) ? t.to(at::kFloat) : t;
}

}  // namespace

at::Tensor fused_conv_relu(const at::Tensor& x_in, const at::Tensor& weight_in, const at::Tensor& bias_in,
                           at::IntArrayRef stride, at::IntArrayRef padding) {
  const at::Tensor x = autocast_to_float(x_in), weight = autocast_to_float(weight_in), bias = autocast_to_float(bias_in);
  FT_REQUIRE(x.dim() == 4 && weight.dim() == 4, "fused conv+ReLU: input and weight must be 4-d (NCHW, OIHW), not ",
             x.sizes(), " and ", weight.sizes());
  FT_REQUIRE(x.size(1) == weight.size(1), "fused conv+ReLU: input has ", x.size(1), " channels, the weight expects ",
             weight.size(1));
  FT_REQUIRE(!bias.defined() || (bias.dim() == 1 && bias.size(0) == weight.size(0)),
             "fused conv+ReLU: bias must have one value per output channel (", weight.size(0), ")");
  FT_REQUIRE(x.device() == weight.device() && x.scalar_type() == weight.scalar_type() &&
                 (!bias.defined() || (bias.device() == x.device() && bias.scalar_type() == x.scalar_type())),
             "fused conv+ReLU: input, weight and bias must share device and dtype");
  FT_REQUIRE(stride.size() == 2 && padding.size() == 2, "fused conv+ReLU: stride and padding must be {h, w}");
  const std::optional<at::Tensor> optional_bias = bias.defined() ? std::optional<at::Tensor>(bias) : std::nullopt;
  // One named operation for profilers and the model summary, which would otherwise see only the
  // allocations inside the kernel's wrapper.
  const std::vector<c10::IValue> inputs{x, weight, bias};
  RECORD_FUNCTION("ft::fused_conv_relu", inputs);
  at::Tensor y = FusedConvReLUFunction::apply(x, weight, optional_bias, stride.vec(), padding.vec());
  if (guard.needsOutputs()) guard.setOutputs(std::vector<c10::IValue>{y});
  return y;
}

}  // namespace ft
