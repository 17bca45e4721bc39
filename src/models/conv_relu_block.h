// ConvReLU: the one module every conv-then-ReLU pair of the models goes through, so that
// model.conv_relu picks ATen's conv2d + relu or the hand-written fused CUDA conv+bias+ReLU kernel.
#pragma once

#include <torch/nn/cloneable.h>
#include <torch/nn/pimpl.h>

#include <cstdint>
#include <string>

#include "config/choices.h"

namespace ft {

// model.conv_relu (config/choices.h) says which implementation computes relu(conv2d(x, weight, bias)).
struct ConvReLUOptions {
  std::int64_t in_channels = 0, out_channels = 0;
  std::int64_t kernel = 3, stride = 1, padding = 1;
  ConvReluKernel implementation = ConvReluKernel::aten;
};

// Square-kernel convolution with bias, followed by ReLU. Its parameters are exactly Conv2d's
// ("weight" [out, in, k, k] and "bias" [out], with Conv2d's initialisation), so parameter names
// and checkpoints do not depend on the implementation chosen.
class ConvReLUImpl : public torch::nn::Cloneable<ConvReLUImpl> {
 public:
  explicit ConvReLUImpl(const ConvReLUOptions& options);

  void reset() override;
  void pretty_print(std::ostream& stream) const override;
  at::Tensor forward(const at::Tensor& x);

  ConvReLUOptions options;
  at::Tensor weight, bias;
};
TORCH_MODULE(ConvReLU);

}  // namespace ft
