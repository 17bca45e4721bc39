// Tests of conv_stack: a stack written as YAML builds with inferred shapes (bn, dropout, avgpool,
// automatic flatten, out 0 = classes), conv+relu pairs become ConvReLU, and impossible layouts name the layer.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "config/loader.h"
#include "model_test_util.h"
#include "models/conv_relu_block.h"
#include "runtime/error.h"

namespace ft {
namespace {

std::shared_ptr<Network> stack(const std::vector<LayerSpec>& layers, const InputShape& input = {}) {
  ModelConfig config;
  config.name = ModelName::conv_stack;
  config.layers = layers;
  return make_network(config, input);
}

// Expects building `layers` to fail with a message containing every one of `parts`.
void expect_spec_refused(const std::vector<LayerSpec>& layers, const std::vector<std::string>& parts,
                  const InputShape& input = {}) {
  try {
    stack(layers, input);
    ADD_FAILURE() << "expected ft::Error";
  } catch (const Error& e) {
    for (const auto& part : parts) EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
  }
}

TEST(ConvStackModel, BuildsFromYamlWithInferredShapes) {
  const Config config = parse_config(R"(
model:
  name: conv_stack
  layers:
    - {type: conv, out: 16, kernel: 3}
    - bn
    - relu
    - {type: maxpool, kernel: 2, stride: 2}
    - {type: conv, out: 32, kernel: 5, stride: 2}
    - gelu
    - {type: avgpool, kernel: 2, stride: 2}
    - {type: dropout, p: 0.25}
    - {type: linear, out: 64}
    - bn
    - relu
    - dropout
    - {type: linear}
)",
                                     "test.yaml");
  auto net = make_network(config.model, {3, 32, 32, 10});
  // 32 -> conv 32 -> pool 16 -> conv (5, stride 2, padding 2) 8 -> pool 4: linear takes 32*4*4 features.
  const auto params = net->named_parameters();
  EXPECT_EQ(params["layers.conv0.weight"].sizes(), (std::vector<int64_t>{16, 3, 3, 3}));
  EXPECT_EQ(params["layers.bn1.weight"].sizes(), (std::vector<int64_t>{16}));
  EXPECT_EQ(params["layers.conv4.weight"].sizes(), (std::vector<int64_t>{32, 16, 5, 5}));
  EXPECT_EQ(params["layers.linear8.weight"].sizes(), (std::vector<int64_t>{64, 32 * 4 * 4}));
  EXPECT_EQ(params["layers.bn9.weight"].sizes(), (std::vector<int64_t>{64}));  // BatchNorm1d after flatten
  EXPECT_EQ(params["layers.linear12.weight"].sizes(), (std::vector<int64_t>{10, 64}));

  net->train();
  EXPECT_EQ(net->forward(at::randn({4, 3, 32, 32})).sizes(), (std::vector<int64_t>{4, 10}));
  net->eval();
  EXPECT_EQ(net->forward(at::randn({1, 3, 32, 32})).sizes(), (std::vector<int64_t>{1, 10}));
}

TEST(ConvStackModel, ConvFollowedByReluIsOneConvReluBlock) {
  auto net = stack({{LayerType::conv, 8}, {LayerType::relu}, {LayerType::conv, 8}, {LayerType::gelu}, {LayerType::linear, 0}});
  const auto children = net->named_children()["layers"]->named_children();
  ASSERT_TRUE(children.find("conv0") != nullptr);
  EXPECT_NE(std::dynamic_pointer_cast<ConvReLUImpl>(children["conv0"]), nullptr);
  EXPECT_EQ(children.find("relu1"), nullptr);  // folded into conv0
  EXPECT_EQ(std::dynamic_pointer_cast<ConvReLUImpl>(children["conv2"]), nullptr);
  EXPECT_NE(children.find("flatten4"), nullptr);  // inserted before the linear
  EXPECT_EQ(net->forward(at::randn({2, 3, 32, 32})).sizes(), (std::vector<int64_t>{2, 10}));
}

TEST(ConvStackModel, ExplicitPaddingAndNoLinearEnding) {
  // An all-convolutional net: 1x1 conv to classes, global average pool, flatten.
  auto net = stack({{LayerType::conv, 8, 3, 1, 0}, {LayerType::relu}, {LayerType::conv, 10, 1}, {LayerType::avgpool, 0, 30, 1}, {LayerType::flatten}});
  EXPECT_EQ(net->forward(at::randn({2, 3, 32, 32})).sizes(), (std::vector<int64_t>{2, 10}));
}

TEST(ConvStackModel, PoolingBelowOnePixelNamesTheLayer) {
  // 28 -> 14 -> 7 -> 3 -> 1 -> nothing: the fifth pooling (layers[5]) cannot fit.
  std::vector<LayerSpec> layers = {{LayerType::conv, 8}};
  for (int i = 0; i < 5; ++i) layers.push_back({LayerType::maxpool, 0, 2, 2});
  layers.push_back({LayerType::linear, 0});
  expect_spec_refused(layers, {"model.layers[5]", "maxpool", "1x1"}, {1, 28, 28, 10});
}

TEST(ConvStackModel, KernelLargerThanInputNamesTheLayer) {
  expect_spec_refused({{LayerType::conv, 8, 9, 1, 0}, {LayerType::linear, 0}}, {"model.layers[0]", "conv", "8x8"}, {1, 8, 8, 10});
}

TEST(ConvStackModel, ConvAfterLinearNamesTheLayer) {
  expect_spec_refused({{LayerType::linear, 32}, {LayerType::conv, 8}, {LayerType::linear, 0}}, {"model.layers[1]", "flatten or linear"});
}

TEST(ConvStackModel, OutZeroIsOnlyAllowedOnTheLastLinear) {
  expect_spec_refused({{LayerType::linear, 0}, {LayerType::relu}, {LayerType::linear, 10}}, {"model.layers[0]", "out > 0"});
}

TEST(ConvStackModel, WrongFinalWidthNamesTheClassCount) {
  expect_spec_refused({{LayerType::conv, 8}, {LayerType::linear, 7}}, {"model.layers", "7 features", "10 classes"});
}

// Unknown layer types never reach the model: the config loader rejects them (test_config_loader.cpp).
TEST(ConvStackModel, EmptyStackIsAnError) {
  expect_spec_refused({}, {"model.layers"});
}

TEST(ConvStackModel, PoolPaddingBeyondHalfTheKernelIsAnError) {
  expect_spec_refused({{LayerType::maxpool, 0, 2, 2, 2}, {LayerType::linear, 0}}, {"model.layers[0]", "padding"});
}

}  // namespace
}  // namespace ft
