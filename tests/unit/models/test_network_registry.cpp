// Tests of make_network: every registered model builds for every data set's input shape and maps
// [N, C, H, W] to [N, classes]; unknown names and unusable shapes become ft::Error naming the key.
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
  layers[0] = {"conv", 16};
  layers[1] = {"relu"};
  layers[2] = {"maxpool", 0, 2, 2};
  layers[3] = {"conv", 32};
  layers[4] = {"bn"};
  layers[5] = {"relu"};
  layers[6] = {"avgpool", 0, 7, 7};
  layers[7] = {"linear", 0};
  return layers;
}

// Fashion-MNIST, CIFAR and STL-10 shapes with their class counts.
const std::vector<InputShape> kInputs = {{1, 28, 28, 10}, {3, 32, 32, 100}, {3, 96, 96, 10}};

TEST(NetworkRegistry, NamesListEveryModel) {
  EXPECT_EQ(network_names(),
            (std::vector<std::string>{"simple_cnn", "conv_stack", "resnet18", "resnet9", "fast_cifar"}));
}

TEST(NetworkRegistry, EveryModelMapsEveryInputShapeToLogits) {
  for (const auto& name : network_names()) {
    for (const auto& input : kInputs) {
      SCOPED_TRACE(name + " on " + std::to_string(input.channels) + "x" + std::to_string(input.height) + "x" +
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

TEST(NetworkRegistry, UnknownNameListsTheValidOnes) {
  ModelConfig config;
  config.name = "vgg16";
  try {
    make_network(config, {});
    FAIL() << "expected ft::Error";
  } catch (const Error& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("model.name"), std::string::npos) << message;
    EXPECT_NE(message.find("vgg16"), std::string::npos) << message;
    EXPECT_NE(message.find("simple_cnn, conv_stack, resnet18, resnet9"), std::string::npos) << message;
  }
}

TEST(NetworkRegistry, RejectsEmptyInputShapes) {
  EXPECT_THROW(test::build("simple_cnn", {0, 32, 32, 10}), Error);
  EXPECT_THROW(test::build("simple_cnn", {3, 32, 32, 0}), Error);
}

TEST(NetworkRegistry, RejectsImagesTooSmallToPoolThreeTimes) {
  EXPECT_THROW(test::build("simple_cnn", {3, 4, 4, 10}), Error);
  EXPECT_THROW(test::build("resnet9", {3, 4, 4, 10}, 8), Error);
}

TEST(NetworkRegistry, RejectsFusedConvReluWhereBatchNormSitsBetween) {
  for (const char* name : {"resnet18", "resnet9"}) {
    try {
      test::build(name, {}, 8, "fused");
      FAIL() << "expected ft::Error for " << name;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("model.conv_relu"), std::string::npos) << e.what();
    }
  }
}

TEST(NetworkRegistry, RejectsUnknownConvReluKernel) {
  EXPECT_THROW(test::build("simple_cnn", {}, 64, "cudnn"), Error);
}

}  // namespace
}  // namespace ft
