// The model summary of the coursework network on Fashion-MNIST's shape: every operation in forward
// order with the right output shape, parameters attributed to their layers, totals equal to the model's.
#include <gtest/gtest.h>

#include "model_test_util.h"
#include "models/model_summary.h"

namespace ft {
namespace {

struct Expected {
  const char* name;
  const char* shape;
  std::int64_t parameters;
};

// "conv1 32x28x28; relu 32x28x28; ...": what a failure prints.
std::string listing_of(const std::vector<ModelLayer>& layers) {
  std::string listing;
  for (const auto& layer : layers) listing += layer.name + " " + layer.output_shape + "; ";
  return listing;
}

void expect_layers(const std::vector<ModelLayer>& layers, const std::vector<Expected>& expected) {
  const std::string listing = listing_of(layers);
  ASSERT_EQ(layers.size(), expected.size()) << listing;
  for (std::size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(layers[i].name, expected[i].name) << i;
    EXPECT_EQ(layers[i].output_shape, expected[i].shape) << i;
    EXPECT_EQ(layers[i].parameters, expected[i].parameters) << i;
  }
}

std::int64_t total(const std::vector<ModelLayer>& layers) {
  std::int64_t sum = 0;
  for (const auto& layer : layers) sum += layer.parameters;
  return sum;
}

TEST(ModelSummary, SimpleCnnOnFashionMnist) {
  const InputShape input{1, 28, 28, 10};
  auto net = test::build(ModelName::simple_cnn, input);
  const auto layers = summarize_network(*net, input);
  expect_layers(layers, {{"conv1", "32x28x28", 320},     {"relu", "32x28x28", 0},     {"max_pool2d", "32x14x14", 0},
                         {"conv2", "64x14x14", 18496},   {"relu", "64x14x14", 0},     {"max_pool2d", "64x7x7", 0},
                         {"conv3", "128x7x7", 73856},    {"relu", "128x7x7", 0},      {"max_pool2d", "128x3x3", 0},
                         {"flatten", "1152", 0},         {"fc1", "256", 295168},      {"relu", "256", 0},
                         {"dropout", "256", 0},          {"fc2", "10", 2570}});
  EXPECT_EQ(total(layers), test::parameter_count(*net));
  EXPECT_TRUE(net->is_training()) << "the summary must restore the training mode";
}

TEST(ModelSummary, FusedConvReluIsOneNamedLayer) {
  const InputShape input{3, 32, 32, 10};
  auto net = test::build(ModelName::simple_cnn, input, 64, ConvReluKernel::fused);
  const auto layers = summarize_network(*net, input);
  ASSERT_GE(layers.size(), 2u);
  EXPECT_EQ(layers[0].name, "conv1");
  EXPECT_EQ(layers[0].output_shape, "32x32x32");
  EXPECT_EQ(layers[0].parameters, 32 * 3 * 9 + 32);
  EXPECT_EQ(layers[1].name, "max_pool2d") << "the fused op includes its ReLU";
  EXPECT_EQ(total(layers), test::parameter_count(*net));
}

TEST(ModelSummary, ResidualNetworkCountsEveryParameterOnce) {
  const InputShape input{3, 32, 32, 10};
  ModelConfig config;
  config.name = ModelName::resnet9;
  config.width = 16;
  const auto layers = model_summary(config, input);
  auto net = test::build(ModelName::resnet9, input, 16);
  EXPECT_EQ(total(layers), test::parameter_count(*net));
  EXPECT_EQ(layers.back().output_shape, "10");
  bool residual_sum = false;
  for (const auto& layer : layers) residual_sum = residual_sum || layer.name == "add";
  EXPECT_TRUE(residual_sum) << "the residual additions are operations of the forward pass";
}

// A module whose parameter reaches an operation inside a list of tensors (a learned row joined to the
// features by cat; the summary runs one image): the list's tensors are the operation's inputs too.
struct JoinedToken : Network {
  JoinedToken() { token = register_parameter("token", at::zeros({1, 5})); }
  at::Tensor forward(const at::Tensor& x) override {
    return at::cat({x.flatten(1), token}, 1);
  }
  at::Tensor token;
};

TEST(ModelSummary, AParameterInsideATensorListIsCounted) {
  JoinedToken net;
  const auto layers = summarize_network(net, InputShape{1, 2, 2, 10});
  const std::string listing = listing_of(layers);
  ASSERT_FALSE(layers.empty()) << listing;
  EXPECT_EQ(layers.back().name, "token") << listing;
  EXPECT_EQ(layers.back().output_shape, "9") << listing;  // 4 features and the 5 of the token
  EXPECT_EQ(layers.back().parameters, 5) << listing;
  EXPECT_EQ(total(layers), 5) << listing;
}

}  // namespace
}  // namespace ft
