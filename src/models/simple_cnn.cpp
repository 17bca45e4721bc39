// simple_cnn: three conv+ReLU+maxpool stages and a two-layer classifier. The flattened size is
// 128 * (H / 8) * (W / 8) with floor division per pooling, so any input of at least 8x8 works.
#include "models/simple_cnn.h"

#include <ATen/ATen.h>
#include <torch/nn/modules/dropout.h>
#include <torch/nn/modules/linear.h>

#include "models/conv_relu_block.h"
#include "runtime/error.h"

namespace ft {
namespace {

class SimpleCnn : public Network {
 public:
  SimpleCnn(const ModelConfig& config, const InputShape& input) {
    FT_REQUIRE(input.height >= 8 && input.width >= 8, "model.name simple_cnn needs images of at least 8x8, not ",
               input.height, "x", input.width);
    FT_REQUIRE(config.dropout >= 0 && config.dropout < 1, "model.dropout must be in [0, 1), not ", config.dropout);
    const ConvReluKernel kernel = config.conv_relu;
    const std::int64_t channels[] = {input.channels, 32, 64, 128};
    for (int i = 0; i < 3; ++i)
      convs_[i] = register_module(cat("conv", i + 1),
                                  ConvReLU(ConvReLUOptions{channels[i], channels[i + 1], 3, 1, 1, kernel}));
    const std::int64_t features = std::int64_t{128} * (input.height / 8) * (input.width / 8);
    fc1_ = register_module("fc1", torch::nn::Linear(features, 256));
    dropout_ = register_module("dropout", torch::nn::Dropout(config.dropout));
    fc2_ = register_module("fc2", torch::nn::Linear(256, input.classes));
  }

  at::Tensor forward(const at::Tensor& x) override {
    at::Tensor h = x;
    for (auto& conv : convs_) h = at::max_pool2d(conv->forward(h), 2);
    h = dropout_->forward(at::relu(fc1_->forward(h.flatten(1))));
    return fc2_->forward(h);
  }

 private:
  ConvReLU convs_[3] = {nullptr, nullptr, nullptr};
  torch::nn::Linear fc1_{nullptr}, fc2_{nullptr};
  torch::nn::Dropout dropout_{nullptr};
};

}  // namespace

std::shared_ptr<Network> make_simple_cnn(const ModelConfig& config, const InputShape& input) {
  return std::make_shared<SimpleCnn>(config, input);
}

}  // namespace ft
