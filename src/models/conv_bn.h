// ConvBN: a bias-free convolution followed by BatchNorm2d, the building block of the ResNets.
// Callers apply ReLU themselves because a residual block adds its shortcut between BN and ReLU.
#pragma once

#include <torch/nn/cloneable.h>
#include <torch/nn/modules/conv.h>
#include <torch/nn/pimpl.h>

#include <cstdint>

#include "models/sync_batch_norm.h"

namespace ft {

class ConvBNImpl : public torch::nn::Cloneable<ConvBNImpl> {
 public:
  // kernel x kernel convolution with padding kernel / 2.
  ConvBNImpl(std::int64_t in_channels, std::int64_t out_channels, std::int64_t kernel, std::int64_t stride);

  void reset() override;
  at::Tensor forward(const at::Tensor& x);

  std::int64_t in_channels, out_channels, kernel, stride;
  torch::nn::Conv2d conv{nullptr};
  SyncBatchNorm2d bn{nullptr};
};
TORCH_MODULE(ConvBN);

}  // namespace ft
