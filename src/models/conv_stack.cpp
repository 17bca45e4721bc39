// conv_stack: turns the LayerSpec list into a torch::nn::Sequential while tracking the activation
// shape (C, H, W, or features once flattened), so impossible layouts fail at build time with the layer named.
#include "models/conv_stack.h"

#include <torch/nn/modules/activation.h>
#include <torch/nn/modules/container/sequential.h>
#include <torch/nn/modules/conv.h>
#include <torch/nn/modules/dropout.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/modules/pooling.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "models/conv_relu_block.h"
#include "models/sync_batch_norm.h"
#include "runtime/error.h"

namespace ft {
namespace {

// The activation shape between two layers.
struct Activation {
  std::int64_t channels, height, width;
  bool flat = false;
  std::int64_t features() const { return flat ? channels : channels * height * width; }
};

// Output size of a sliding window, or 0 when the window does not fit.
std::int64_t window_output(std::int64_t in, std::int64_t kernel, std::int64_t stride, std::int64_t padding) {
  return in + 2 * padding < kernel ? 0 : (in + 2 * padding - kernel) / stride + 1;
}

class StackBuilder {
 public:
  StackBuilder(const ModelConfig& config, const InputShape& input)
      : config_(config), classes_(input.classes), shape_{input.channels, input.height, input.width} {}

  torch::nn::Sequential build() {
    const auto& layers = config_.layers;
    FT_REQUIRE(!layers.empty(), "model.name conv_stack needs model.layers");
    for (std::size_t i = 0; i < layers.size(); ++i) {
      index_ = i;
      at_ = cat("model.layers[", i, "]");
      name_ = cat(layers[i].type, i);
      const bool relu_follows = i + 1 < layers.size() && layers[i + 1].type == LayerType::relu;
      if (add(layers[i], i + 1 == layers.size(), relu_follows)) ++i;
    }
    if (!shape_.flat) flatten(cat("flatten", layers.size()));
    FT_REQUIRE(shape_.features() == classes_, "model.layers: the stack ends with ", shape_.features(),
               " features but the data set has ", classes_, " classes; end with {type: linear} (out 0 = classes)");
    return seq_;
  }

 private:
  // Appends one layer; returns true when it also consumed the relu that follows it.
  // A switch without default: a layer type added to LayerType and not built here does not compile.
  bool add(const LayerSpec& l, bool last, bool relu_follows) {
    switch (l.type) {
      case LayerType::conv: return add_conv(l, relu_follows);
      case LayerType::bn:
        if (shape_.flat)
          append(name_, SyncBatchNorm1d(shape_.features()));
        else
          append(name_, SyncBatchNorm2d(shape_.channels));
        return false;
      case LayerType::relu: append(name_, torch::nn::ReLU()); return false;
      case LayerType::gelu: append(name_, torch::nn::GELU()); return false;
      case LayerType::maxpool:
      case LayerType::avgpool: add_pool(l); return false;
      case LayerType::dropout:
        FT_REQUIRE(l.p >= 0 && l.p < 1, at_, ": dropout p must be in [0, 1), not ", l.p);
        append(name_, torch::nn::Dropout(l.p));
        return false;
      case LayerType::flatten: flatten(name_); return false;
      case LayerType::linear: add_linear(l, last); return false;
    }
    throw Error(cat(at_, ": unknown layer type ", static_cast<int>(l.type)));
  }

  bool add_conv(const LayerSpec& l, bool relu_follows) {
    FT_REQUIRE(!shape_.flat, at_, ": a conv layer cannot follow flatten or linear");
    FT_REQUIRE(l.out > 0 && l.kernel > 0 && l.stride > 0 && l.padding >= -1, at_,
               ": conv needs out > 0, kernel > 0, stride > 0 and padding >= -1");
    const std::int64_t padding = l.padding < 0 ? l.kernel / 2 : l.padding;
    slide(l, padding);
    if (relu_follows) {
      append(name_, ConvReLU(ConvReLUOptions{shape_.channels, l.out, l.kernel, l.stride, padding,
                                             config_.conv_relu}));
    } else {
      append(name_, torch::nn::Conv2d(torch::nn::Conv2dOptions(shape_.channels, l.out, l.kernel)
                                          .stride(l.stride)
                                          .padding(padding)));
    }
    shape_.channels = l.out;
    return relu_follows;
  }

  void add_pool(const LayerSpec& l) {
    FT_REQUIRE(!shape_.flat, at_, ": a ", l.type, " layer cannot follow flatten or linear");
    FT_REQUIRE(l.kernel > 0 && l.stride > 0, at_, ": ", l.type, " needs kernel > 0 and stride > 0");
    const std::int64_t padding = l.padding < 0 ? 0 : l.padding;
    FT_REQUIRE(padding <= l.kernel / 2, at_, ": ", l.type, " padding ", padding, " exceeds half the kernel (",
               l.kernel, ")");
    slide(l, padding);
    if (l.type == LayerType::maxpool)
      append(name_, torch::nn::MaxPool2d(torch::nn::MaxPool2dOptions(l.kernel).stride(l.stride).padding(padding)));
    else
      append(name_, torch::nn::AvgPool2d(torch::nn::AvgPool2dOptions(l.kernel).stride(l.stride).padding(padding)));
  }

  void add_linear(const LayerSpec& l, bool last) {
    FT_REQUIRE(l.out > 0 || last, at_, ": linear needs out > 0 (only the last layer may omit it to mean classes)");
    if (!shape_.flat) flatten(cat("flatten", index_));
    const std::int64_t out = l.out > 0 ? l.out : classes_;
    append(name_, torch::nn::Linear(shape_.features(), out));
    shape_.channels = out;
  }

  // Moves the spatial shape through a kernel x kernel window (conv or pool); errors when it does not fit.
  void slide(const LayerSpec& l, std::int64_t padding) {
    const std::int64_t h = window_output(shape_.height, l.kernel, l.stride, padding);
    const std::int64_t w = window_output(shape_.width, l.kernel, l.stride, padding);
    FT_REQUIRE(h >= 1 && w >= 1, at_, ": ", l.type, " with kernel ", l.kernel, ", stride ", l.stride, ", padding ",
               padding, " does not fit its ", shape_.height, "x", shape_.width, " input (", shape_.channels,
               " channels); remove a pooling layer or use larger images");
    shape_.height = h;
    shape_.width = w;
  }

  template <typename Module>
  void append(std::string name, Module module) {
    seq_->push_back(std::move(name), std::move(module));
  }

  void flatten(const std::string& name) {
    if (!shape_.flat) shape_ = Activation{shape_.features(), 1, 1, true};
    append(name, torch::nn::Flatten());
  }

  const ModelConfig& config_;
  const std::int64_t classes_;
  Activation shape_;
  torch::nn::Sequential seq_;
  // The layer being added: its index in model.layers, its config key for messages, its module name.
  std::size_t index_ = 0;
  std::string at_, name_;
};

class ConvStack : public Network {
 public:
  ConvStack(const ModelConfig& config, const InputShape& input)
      : layers_(register_module("layers", StackBuilder(config, input).build())) {}

  at::Tensor forward(const at::Tensor& x) override { return layers_->forward(x); }

 private:
  torch::nn::Sequential layers_;
};

}  // namespace

std::shared_ptr<Network> make_conv_stack(const ModelConfig& config, const InputShape& input) {
  return std::make_shared<ConvStack>(config, input);
}

}  // namespace ft
