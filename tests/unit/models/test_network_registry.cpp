// Tests of make_network: every registered model builds for every data set's input shape and maps
// [N, C, H, W] to [N, classes]; unusable shapes and settings become ft::Error naming the key.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "model_test_util.h"
#include "runtime/error.h"

namespace ft {
namespace {

// A conv_stack that works for every test input: two conv stages, global pooling, two linears.
std::vector<LayerSpec> small_stack() {
  std::vector<LayerSpec> layers(8);
  layers[0] = {LayerType::conv, 16};
  layers[1] = {LayerType::relu};
  layers[2] = {LayerType::maxpool, 0, 2, 2};
  layers[3] = {LayerType::conv, 32};
  layers[4] = {LayerType::bn};
  layers[5] = {LayerType::relu};
  layers[6] = {LayerType::avgpool, 0, 7, 7};
  layers[7] = {LayerType::linear, 0};
  return layers;
}

// Fashion-MNIST, CIFAR and STL-10 shapes with their class counts.
const std::vector<InputShape> kInputs = {{1, 28, 28, 10}, {3, 32, 32, 100}, {3, 96, 96, 10}};

TEST(NetworkRegistry, NamesListEveryModel) {
  EXPECT_EQ(choice_list<ModelName>(), "simple_cnn|conv_stack|resnet18|resnet9|fast_cifar");
}

// Every name model.name accepts builds: the choice table and the registry cannot drift apart.
TEST(NetworkRegistry, EveryModelMapsEveryInputShapeToLogits) {
  for (const auto& [name, text] : Choices<ModelName>::names) {
    for (const auto& input : kInputs) {
      SCOPED_TRACE(std::string(text) + " on " + std::to_string(input.channels) + "x" + std::to_string(input.height) + "x" +
                   std::to_string(input.width));
      ModelConfig config;
      config.name = name;
      config.width = 8;  // resnets: small enough for a CPU test, same structure
      config.layers = small_stack();
      auto net = make_network(config, input);
      net->train();
      const at::Tensor y = net->forward(at::randn({2, input.channels, input.height, input.width}));
      EXPECT_EQ(y.sizes(), (std::vector<int64_t>{2, input.classes}));
      EXPECT_TRUE(y.isfinite().all().item<bool>());
    }
  }
}

TEST(NetworkRegistry, RejectsEmptyInputShapes) {
  EXPECT_THROW(test::build(ModelName::simple_cnn, {0, 32, 32, 10}), Error);
  EXPECT_THROW(test::build(ModelName::simple_cnn, {3, 32, 32, 0}), Error);
}

TEST(NetworkRegistry, RejectsImagesTooSmallToPoolThreeTimes) {
  EXPECT_THROW(test::build(ModelName::simple_cnn, {3, 4, 4, 10}), Error);
  EXPECT_THROW(test::build(ModelName::resnet9, {3, 4, 4, 10}, 8), Error);
}

TEST(NetworkRegistry, RejectsFusedConvReluWhereBatchNormSitsBetween) {
  for (const ModelName name : {ModelName::resnet18, ModelName::resnet9}) {
    try {
      test::build(name, {}, 8, ConvReluKernel::fused);
      FAIL() << "expected ft::Error for " << name;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("model.conv_relu"), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace ft
