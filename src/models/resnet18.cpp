// resnet18: BasicBlock (two 3x3 conv+BN, identity or 1x1 conv+BN shortcut, ReLU after the sum) and
// the network that stacks eight of them behind a 3x3 stem.
#include "models/resnet18.h"

#include <ATen/ATen.h>
#include <torch/nn/modules/container/sequential.h>
#include <torch/nn/modules/conv.h>
#include <torch/nn/modules/linear.h>

#include <cstdint>

#include "models/conv_bn.h"
#include "models/conv_relu_block.h"
#include "models/sync_batch_norm.h"
#include "runtime/error.h"

namespace ft {
namespace {

torch::nn::Conv2d conv3x3(std::int64_t in, std::int64_t out, std::int64_t stride) {
  return torch::nn::Conv2d(torch::nn::Conv2dOptions(in, out, 3).stride(stride).padding(1).bias(false));
}

class BasicBlock : public torch::nn::Module {
 public:
  BasicBlock(std::int64_t in, std::int64_t out, std::int64_t stride)
      : conv1_(register_module("conv1", conv3x3(in, out, stride))),
        bn1_(register_module("bn1", SyncBatchNorm2d(out))),
        conv2_(register_module("conv2", conv3x3(out, out, 1))),
        bn2_(register_module("bn2", SyncBatchNorm2d(out))) {
    if (stride != 1 || in != out) shortcut_ = register_module("shortcut", ConvBN(in, out, 1, stride));
  }

  at::Tensor forward(const at::Tensor& x) {
    const at::Tensor h = at::relu(bn1_->forward(conv1_->forward(x)));
    const at::Tensor identity = shortcut_ ? shortcut_->forward(x) : x;
    return at::relu(bn2_->forward(conv2_->forward(h)) + identity);
  }

 private:
  torch::nn::Conv2d conv1_;
  SyncBatchNorm2d bn1_;
  torch::nn::Conv2d conv2_;
  SyncBatchNorm2d bn2_;
  ConvBN shortcut_{nullptr};
};

class ResNet18 : public Network {
 public:
  ResNet18(const ModelConfig& config, const InputShape& input) {
    FT_REQUIRE(config.conv_relu == ConvReluKernel::aten,
               "model.conv_relu 'fused' needs a conv followed directly by ReLU; resnet18 has batch norm in "
               "between, so use 'aten'");
    FT_REQUIRE(config.width >= 1, "model.width must be at least 1, not ", config.width);
    const std::int64_t w = config.width;
    conv1_ = register_module("conv1", conv3x3(input.channels, w, 1));
    bn1_ = register_module("bn1", SyncBatchNorm2d(w));
    std::int64_t in = w;
    for (int stage = 0; stage < 4; ++stage) {
      const std::int64_t out = w << stage;
      torch::nn::Sequential blocks;
      blocks->push_back(std::make_shared<BasicBlock>(in, out, stage == 0 ? 1 : 2));
      blocks->push_back(std::make_shared<BasicBlock>(out, out, 1));
      stages_[stage] = register_module(cat("layer", stage + 1), blocks);
      in = out;
    }
    fc_ = register_module("fc", torch::nn::Linear(in, input.classes));
  }

  at::Tensor forward(const at::Tensor& x) override {
    at::Tensor h = at::relu(bn1_->forward(conv1_->forward(x)));
    for (auto& stage : stages_) h = stage->forward(h);
    return fc_->forward(at::adaptive_avg_pool2d(h, {1, 1}).flatten(1));
  }

 private:
  torch::nn::Conv2d conv1_{nullptr};
  SyncBatchNorm2d bn1_{nullptr};
  torch::nn::Sequential stages_[4];
  torch::nn::Linear fc_{nullptr};
};

}  // namespace

std::shared_ptr<Network> make_resnet18(const ModelConfig& config, const InputShape& input) {
  return std::make_shared<ResNet18>(config, input);
}

}  // namespace ft
