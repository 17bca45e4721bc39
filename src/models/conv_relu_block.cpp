// ConvReLU's parameters (initialised by a Conv2d of the same shape) and its forward pass, which
// dispatches to at::conv2d + at::relu or to the fused conv+bias+ReLU operator.
#include "models/conv_relu_block.h"

#include <ATen/ATen.h>
#include <torch/nn/modules/conv.h>

#include <ostream>

#include "models/fused_conv_relu.h"
#include "runtime/error.h"

namespace ft {

ConvReLUImpl::ConvReLUImpl(const ConvReLUOptions& options_) : options(options_) { reset(); }

void ConvReLUImpl::reset() {
  FT_REQUIRE(options.in_channels > 0 && options.out_channels > 0 && options.kernel > 0 && options.stride > 0 &&
                 options.padding >= 0,
             "ConvReLU: channels, kernel and stride must be positive and padding non-negative");
  torch::nn::Conv2dImpl initial(torch::nn::Conv2dOptions(options.in_channels, options.out_channels, options.kernel)
                                    .stride(options.stride)
                                    .padding(options.padding));
  weight = register_parameter("weight", initial.weight.detach());
  bias = register_parameter("bias", initial.bias.detach());
}

void ConvReLUImpl::pretty_print(std::ostream& stream) const {
  stream << "ft::ConvReLU(" << options.in_channels << ", " << options.out_channels << ", kernel_size="
         << options.kernel << ", stride=" << options.stride << ", padding=" << options.padding << ", implementation="
         << choice_name(options.implementation) << ")";
}

at::Tensor ConvReLUImpl::forward(const at::Tensor& x) {
  if (options.implementation == ConvReluKernel::fused)
    return fused_conv_relu(x, weight, bias, {options.stride, options.stride}, {options.padding, options.padding});
  return at::relu(at::conv2d(x, weight, bias, options.stride, options.padding));
}

}  // namespace ft
