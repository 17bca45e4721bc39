// resnet9: eight conv+BN+ReLU units, three 2x2 max-pools, two residual pairs (x + f(x), no ReLU
// after the sum, as in Page's original), and a bias-free classifier whose logits are scaled by 0.125.
#include "models/resnet9.h"

#include <ATen/ATen.h>
#include <torch/nn/modules/linear.h>

#include <cstdint>
#include <string>

#include "models/conv_bn.h"
#include "models/conv_relu_block.h"
#include "runtime/error.h"

namespace ft {
namespace {

constexpr double kResNet9LogitScale = 0.125;

class ResNet9 : public Network {
 public:
  ResNet9(const ModelConfig& config, const InputShape& input) {
    FT_REQUIRE(config.conv_relu == ConvReluKernel::aten,
               "model.conv_relu 'fused' needs a conv followed directly by ReLU; resnet9 has batch norm in "
               "between, so use 'aten'");
    FT_REQUIRE(config.width >= 1, "model.width must be at least 1, not ", config.width);
    FT_REQUIRE(input.height >= 8 && input.width >= 8, "model.name resnet9 needs images of at least 8x8, not ",
               input.height, "x", input.width);
    const std::int64_t w = config.width;
    prep_ = unit("prep", input.channels, w);
    layer1_ = unit("layer1", w, 2 * w);
    layer1_res1_ = unit("layer1_res1", 2 * w, 2 * w);
    layer1_res2_ = unit("layer1_res2", 2 * w, 2 * w);
    layer2_ = unit("layer2", 2 * w, 4 * w);
    layer3_ = unit("layer3", 4 * w, 8 * w);
    layer3_res1_ = unit("layer3_res1", 8 * w, 8 * w);
    layer3_res2_ = unit("layer3_res2", 8 * w, 8 * w);
    fc_ = register_module("fc", torch::nn::Linear(torch::nn::LinearOptions(8 * w, input.classes).bias(false)));
  }

  at::Tensor forward(const at::Tensor& x) override {
    at::Tensor h = apply(prep_, x);
    h = at::max_pool2d(apply(layer1_, h), 2);
    h = h + apply(layer1_res2_, apply(layer1_res1_, h));
    h = at::max_pool2d(apply(layer2_, h), 2);
    h = at::max_pool2d(apply(layer3_, h), 2);
    h = h + apply(layer3_res2_, apply(layer3_res1_, h));
    return fc_->forward(h.amax({2, 3})) * kResNet9LogitScale;  // amax over H, W: adaptive max pool to 1x1
  }

 private:
  ConvBN unit(const std::string& name, std::int64_t in, std::int64_t out) {
    return register_module(name, ConvBN(in, out, 3, 1));
  }
  static at::Tensor apply(ConvBN& unit, const at::Tensor& x) { return at::relu(unit->forward(x)); }

  ConvBN prep_{nullptr}, layer1_{nullptr}, layer1_res1_{nullptr}, layer1_res2_{nullptr};
  ConvBN layer2_{nullptr}, layer3_{nullptr}, layer3_res1_{nullptr}, layer3_res2_{nullptr};
  torch::nn::Linear fc_{nullptr};
};

}  // namespace

std::shared_ptr<Network> make_resnet9(const ModelConfig& config, const InputShape& input) {
  return std::make_shared<ResNet9>(config, input);
}

}  // namespace ft
