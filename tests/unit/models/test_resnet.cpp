// Tests of resnet18 and resnet9: parameter counts against closed-form counts of the architectures
// (11,173,962 and 6,573,120 at width 64, 10 classes), and parameter names that follow the published models.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "model_test_util.h"
#include "models/conv_bn.h"

namespace ft {
namespace {

std::int64_t conv3x3(std::int64_t in, std::int64_t out) { return in * out * 9; }
std::int64_t bn(std::int64_t channels) { return 2 * channels; }

// CIFAR ResNet-18: stem conv+bn; per stage two BasicBlocks (two conv3x3+bn each), the first block of
// stages 2-4 with a 1x1 conv+bn shortcut; fc with bias.
std::int64_t resnet18_parameters(std::int64_t in_channels, std::int64_t w, std::int64_t classes) {
  std::int64_t count = conv3x3(in_channels, w) + bn(w);
  std::int64_t in = w;
  for (int stage = 0; stage < 4; ++stage) {
    const std::int64_t out = w << stage;
    count += conv3x3(in, out) + bn(out) + conv3x3(out, out) + bn(out);  // block 0
    if (in != out) count += in * out + bn(out);                          // its shortcut
    count += 2 * (conv3x3(out, out) + bn(out));                          // block 1
    in = out;
  }
  return count + in * classes + classes;
}

// DAWNBench ResNet-9: eight conv3x3+bn units and a bias-free fc.
std::int64_t resnet9_parameters(std::int64_t in_channels, std::int64_t w, std::int64_t classes) {
  return conv3x3(in_channels, w) + bn(w) + conv3x3(w, 2 * w) + bn(2 * w) + 2 * (conv3x3(2 * w, 2 * w) + bn(2 * w)) +
         conv3x3(2 * w, 4 * w) + bn(4 * w) + conv3x3(4 * w, 8 * w) + bn(8 * w) +
         2 * (conv3x3(8 * w, 8 * w) + bn(8 * w)) + 8 * w * classes;
}

TEST(ResNetModel, ResNet18ParameterCountAtWidth64) {
  EXPECT_EQ(resnet18_parameters(3, 64, 10), 11173962);
  EXPECT_EQ(test::parameter_count(*test::build(ModelName::resnet18, {3, 32, 32, 10})), 11173962);
}

TEST(ResNetModel, ResNet18ParameterCountFollowsWidthChannelsAndClasses) {
  EXPECT_EQ(test::parameter_count(*test::build(ModelName::resnet18, {1, 28, 28, 100}, 16)), resnet18_parameters(1, 16, 100));
}

TEST(ResNetModel, ResNet9ParameterCountAtWidth64) {
  EXPECT_EQ(resnet9_parameters(3, 64, 10), 6573120);
  EXPECT_EQ(test::parameter_count(*test::build(ModelName::resnet9, {3, 32, 32, 10})), 6573120);
  EXPECT_EQ(test::parameter_count(*test::build(ModelName::resnet9, {1, 28, 28, 100}, 16)), resnet9_parameters(1, 16, 100));
}

TEST(ResNetModel, ResNet18NamesFollowTorchvision) {
  auto net = test::build(ModelName::resnet18, {}, 8);
  for (const char* name : {"conv1.weight", "bn1.weight", "layer1.0.conv1.weight", "layer1.1.bn2.bias",
                           "layer2.0.shortcut.conv.weight", "layer4.0.shortcut.bn.weight", "layer4.1.conv2.weight",
                           "fc.weight", "fc.bias"})
    EXPECT_TRUE(test::has_parameter(*net, name)) << name;
  EXPECT_FALSE(test::has_parameter(*net, "layer1.0.shortcut.conv.weight"));  // identity shortcut
  EXPECT_FALSE(test::has_parameter(*net, "conv1.bias"));                     // convolutions feed batch norm
}

TEST(ResNetModel, ResNet9NamesFollowThePublishedLayers) {
  auto net = test::build(ModelName::resnet9, {}, 8);
  for (const char* name : {"prep.conv.weight", "prep.bn.weight", "layer1.conv.weight", "layer1_res1.conv.weight",
                           "layer1_res2.bn.bias", "layer2.conv.weight", "layer3.conv.weight",
                           "layer3_res2.conv.weight", "fc.weight"})
    EXPECT_TRUE(test::has_parameter(*net, name)) << name;
  EXPECT_FALSE(test::has_parameter(*net, "fc.bias"));
}

TEST(ResNetModel, ResNet9ForwardIsPagesNetwork) {
  // Recomputes the forward pass from the named units: residuals x + f(x) without a ReLU after the sum,
  // global max pool, and logits scaled by 0.125.
  auto net = test::build(ModelName::resnet9, {3, 32, 32, 4}, 4);
  net->eval();
  const auto children = net->named_children();
  auto unit = [&](const char* name, const at::Tensor& x) {
    return at::relu(std::dynamic_pointer_cast<ConvBNImpl>(children[name])->forward(x));
  };
  const at::Tensor x = at::randn({2, 3, 32, 32});
  at::Tensor h = at::max_pool2d(unit("layer1", unit("prep", x)), 2);
  h = h + unit("layer1_res2", unit("layer1_res1", h));
  h = at::max_pool2d(unit("layer3", at::max_pool2d(unit("layer2", h), 2)), 2);
  h = h + unit("layer3_res2", unit("layer3_res1", h));
  const at::Tensor features = std::get<0>(at::adaptive_max_pool2d(h, {1, 1})).flatten(1);
  const at::Tensor expected = at::linear(features, net->named_parameters()["fc.weight"]) * 0.125;
  EXPECT_TRUE(at::allclose(net->forward(x), expected, 1e-5, 1e-6));
}

TEST(ResNetModel, BatchNormStatisticsAreBuffersNotParameters) {
  auto net = test::build(ModelName::resnet18, {}, 8);
  std::int64_t running_stats = 0;
  for (const auto& item : net->named_buffers())
    if (item.key().find("running_mean") != std::string::npos) ++running_stats;
  EXPECT_EQ(running_stats, 1 + 4 * 4 + 3);  // stem, four per stage, three shortcuts
}

}  // namespace
}  // namespace ft
