// Tests of fast_cifar (airbench94): shapes, the closed-form parameter count (1,972,792 at width 64 on CIFAR-10),
// frozen parameters, the data-fitted whitening layer, the optimizer rules, and the forward pass recomputed by hand.
#include <gtest/gtest.h>

#include <ATen/ATen.h>
#include <torch/nn/modules/batchnorm.h>

#include <cmath>
#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "model_test_util.h"
#include "runtime/error.h"

namespace ft {
namespace {

// whiten: 2*d filters of d = C*2*2 weights each, plus 2*d biases; each group: conv3x3 in->out and out->out
// (no bias) and two BatchNorms (weight + bias); fc: 4w -> classes, no bias.
// At C=3, w=64, 10 classes: whiten 2*12*12 + 24 = 312; group1 24*64*9 + 64*64*9 + 4*64 = 50,944;
// group2 64*256*9 + 256*256*9 + 4*256 = 738,304; group3 2*256*256*9 + 4*256 = 1,180,672; fc 2,560.
// Total 1,972,792.
std::int64_t fast_cifar_parameters(std::int64_t in_channels, std::int64_t w, std::int64_t classes) {
  const std::int64_t d = in_channels * 4;
  auto group = [](std::int64_t in, std::int64_t out) { return in * out * 9 + out * out * 9 + 4 * out; };
  return 2 * d * d + 2 * d + group(2 * d, w) + group(w, 4 * w) + group(4 * w, 4 * w) + 4 * w * classes;
}

bool is_frozen_name(const std::string& name) {
  return name == "whiten.weight" || (name.find(".norm") != std::string::npos &&
                                     name.size() > 7 && name.compare(name.size() - 7, 7, ".weight") == 0);
}

// Zero-mean images whose pixels are correlated across channels and with their right and lower neighbours,
// plus independent noise so that no patch direction has a tiny variance.
at::Tensor correlated_images(std::int64_t n, std::int64_t c, std::int64_t h, std::int64_t w) {
  const at::Tensor z = at::randn({n, c, h + 1, w + 1});
  at::Tensor x = z.narrow(2, 0, h).narrow(3, 0, w) + 0.9 * z.narrow(2, 1, h).narrow(3, 0, w) +
                 0.7 * z.narrow(2, 0, h).narrow(3, 1, w);
  x = x + 0.8 * x.sum(1, true);  // channel mixing (I + 0.8 * ones)
  return 2.0 * x + 0.5 * at::randn({n, c, h, w});
}

TEST(FastCifarModel, MapsCifarAndFashionMnistToLogits) {
  for (const InputShape& input : {InputShape{3, 32, 32, 10}, InputShape{1, 28, 28, 10}}) {
    auto net = test::build(ModelName::fast_cifar, input);
    net->train();
    const at::Tensor y = net->forward(at::randn({2, input.channels, input.height, input.width}));
    EXPECT_EQ(y.sizes(), (std::vector<int64_t>{2, 10}));
    EXPECT_TRUE(y.isfinite().all().item<bool>());
  }
}

TEST(FastCifarModel, SmallestInputIs16x16) {
  auto net = test::build(ModelName::fast_cifar, {3, 16, 16, 10}, 8);
  net->eval();
  EXPECT_EQ(net->forward(at::randn({1, 3, 16, 16})).sizes(), (std::vector<int64_t>{1, 10}));
  EXPECT_THROW(test::build(ModelName::fast_cifar, {3, 15, 16, 10}, 8), Error);
}

TEST(FastCifarModel, ParameterCountAtWidth64) {
  EXPECT_EQ(fast_cifar_parameters(3, 64, 10), 1972792);
  EXPECT_EQ(test::parameter_count(*test::build(ModelName::fast_cifar, {3, 32, 32, 10})), 1972792);
  EXPECT_EQ(test::parameter_count(*test::build(ModelName::fast_cifar, {1, 28, 28, 100}, 16)),
            fast_cifar_parameters(1, 16, 100));
}

TEST(FastCifarModel, NamesFollowAirbench) {
  auto net = test::build(ModelName::fast_cifar, {}, 8);
  const std::vector<std::string> expected = {
      "whiten.weight",       "whiten.bias",         "group1.conv1.weight", "group1.norm1.weight",
      "group1.norm1.bias",   "group1.conv2.weight", "group1.norm2.weight", "group1.norm2.bias",
      "group2.conv1.weight", "group2.norm1.weight", "group2.norm1.bias",   "group2.conv2.weight",
      "group2.norm2.weight", "group2.norm2.bias",   "group3.conv1.weight", "group3.norm1.weight",
      "group3.norm1.bias",   "group3.conv2.weight", "group3.norm2.weight", "group3.norm2.bias",
      "fc.weight"};
  EXPECT_EQ(test::parameter_names(*net), expected);
}

TEST(FastCifarModel, WhitenWeightAndNormWeightsAreFrozen) {
  auto net = test::build(ModelName::fast_cifar, {}, 8);
  int frozen = 0;
  for (const auto& item : net->named_parameters()) {
    EXPECT_EQ(item.value().requires_grad(), !is_frozen_name(item.key())) << item.key();
    frozen += item.value().requires_grad() ? 0 : 1;
  }
  EXPECT_EQ(frozen, 1 + 6);  // whiten.weight and the six norm weights
  const auto params = net->named_parameters();
  EXPECT_TRUE(at::equal(params["group2.norm1.weight"], at::ones({32})));
  EXPECT_TRUE(at::equal(params["group2.norm1.bias"], at::zeros({32})));
  EXPECT_TRUE(at::equal(params["whiten.bias"], at::zeros({24})));
}

TEST(FastCifarModel, BatchNormUsesAirbenchMomentumAndEps) {
  auto net = test::build(ModelName::fast_cifar, {}, 8);
  int norms = 0;
  for (const auto& item : net->named_modules()) {
    const auto bn = std::dynamic_pointer_cast<torch::nn::BatchNorm2dImpl>(item.value());
    if (!bn) continue;
    ++norms;
    ASSERT_TRUE(bn->options.momentum().has_value()) << item.key();
    EXPECT_DOUBLE_EQ(*bn->options.momentum(), 0.4) << item.key();  // airbench: 1 - batchnorm_momentum 0.6
    EXPECT_DOUBLE_EQ(bn->options.eps(), 1e-12) << item.key();
  }
  EXPECT_EQ(norms, 6);
}

TEST(FastCifarModel, ConvolutionsStartWithIdentityFilters) {
  const std::int64_t w = 8;
  auto net = test::build(ModelName::fast_cifar, {}, w);
  const auto params = net->named_parameters();
  auto identity = [](std::int64_t out, std::int64_t in) {
    at::Tensor d = at::zeros({out, in, 3, 3});
    for (std::int64_t i = 0; i < std::min(out, in); ++i) d[i][i][1][1] = 1;
    return d;
  };
  // group1.conv1: 24 -> 8, so all 8 filters pass one whitened channel through
  EXPECT_TRUE(at::equal(params["group1.conv1.weight"], identity(w, 24)));
  EXPECT_TRUE(at::equal(params["group1.conv2.weight"], identity(w, w)));
  // group2.conv1: 8 -> 32, the first 8 filters are the identity, the others keep their random init
  const at::Tensor widen = params["group2.conv1.weight"];
  EXPECT_TRUE(at::equal(widen.narrow(0, 0, w), identity(w, w)));
  EXPECT_GT(widen.narrow(0, w, 3 * w).abs().sum().item<double>(), 0.0);
  EXPECT_TRUE(at::equal(params["group3.conv2.weight"], identity(4 * w, 4 * w)));
}

TEST(FastCifarModel, InitializeFromDataWhitensPatches) {
  // The 3x96x96 case spans two chunks of the patch statistics.
  for (const InputShape& input : {InputShape{3, 32, 32, 10}, InputShape{1, 28, 28, 10}, InputShape{3, 96, 96, 10}}) {
    const std::int64_t c = input.channels, d = c * 4;
    SCOPED_TRACE(std::to_string(c) + "x" + std::to_string(input.height));
    at::manual_seed(3);
    auto net = test::build(ModelName::fast_cifar, input, 8);
    const at::Tensor images = correlated_images(48, c, input.height, input.width);
    net->initialize_from_data(images);

    const auto params = net->named_parameters();
    const at::Tensor weight = params["whiten.weight"];
    ASSERT_EQ(weight.sizes(), (std::vector<int64_t>{2 * d, c, 2, 2}));
    EXPECT_FALSE(weight.requires_grad());
    EXPECT_TRUE(at::equal(weight.narrow(0, d, d), -weight.narrow(0, 0, d)));
    EXPECT_TRUE(at::equal(params["whiten.bias"], at::zeros({2 * d})));

    // The raw patches are far from white ...
    const at::Tensor patches =
        at::im2col(images.to(at::kDouble), {2, 2}, {1, 1}, {0, 0}, {1, 1}).transpose(1, 2).reshape({-1, d});
    const at::Tensor raw = at::cov(patches.t());
    EXPECT_GT((raw - at::eye(d, raw.options())).abs().max().item<double>(), 1.0);
    // ... the first half of the whitening conv's outputs (no bias, no GELU) has identity covariance.
    const at::Tensor y = at::conv2d(images, weight.narrow(0, 0, d)).to(at::kDouble);
    const at::Tensor flat = y.permute({0, 2, 3, 1}).reshape({-1, d});
    const at::Tensor covariance = at::cov(flat.t());
    EXPECT_LT((covariance - at::eye(d, covariance.options())).abs().max().item<double>(), 0.05) << covariance;
  }
}

TEST(FastCifarModel, InitializeFromDataRejectsOtherChannelCounts) {
  auto net = test::build(ModelName::fast_cifar, {3, 32, 32, 10}, 8);
  EXPECT_THROW(net->initialize_from_data(at::randn({4, 1, 32, 32})), Error);
  EXPECT_THROW(net->initialize_from_data(at::randn({3, 32, 32})), Error);
}

TEST(FastCifarModel, ParameterRulesScaleNormBiasesAndFreezeWhitenBias) {
  auto net = test::build(ModelName::fast_cifar, {}, 8);
  const auto rules = net->parameter_rules();
  std::set<std::string> names;
  for (const auto& [name, rule] : rules) names.insert(name);
  const std::set<std::string> expected = {"group1.norm1.bias", "group1.norm2.bias", "group2.norm1.bias",
                                          "group2.norm2.bias", "group3.norm1.bias", "group3.norm2.bias",
                                          "whiten.bias"};
  EXPECT_EQ(names, expected);
  for (const auto& [name, rule] : rules) {
    EXPECT_TRUE(test::has_parameter(*net, name)) << name;
    if (name == "whiten.bias") {
      EXPECT_EQ(rule.train_epochs, 3);
      EXPECT_DOUBLE_EQ(rule.lr_scale, 1.0);
    } else {
      EXPECT_DOUBLE_EQ(rule.lr_scale, 64.0) << name;
      EXPECT_EQ(rule.train_epochs, 0) << name;
    }
  }

  ModelConfig config;
  config.name = ModelName::fast_cifar;
  config.width = 8;
  config.whiten_bias_epochs = 5;
  config.norm_bias_lr_scale = 16;
  const auto custom = make_network(config, {})->parameter_rules();
  EXPECT_EQ(custom.at("whiten.bias").train_epochs, 5);
  EXPECT_DOUBLE_EQ(custom.at("group3.norm2.bias").lr_scale, 16.0);
}

TEST(FastCifarModel, BackwardReachesTrainableParametersOnly) {
  auto net = test::build(ModelName::fast_cifar, {3, 32, 32, 10}, 8);
  net->initialize_from_data(at::randn({16, 3, 32, 32}));
  net->train();
  const at::Tensor logits = net->forward(at::randn({4, 3, 32, 32}));
  at::cross_entropy_loss(logits, at::randint(0, 10, {4})).backward();
  for (const auto& item : net->named_parameters()) {
    const at::Tensor& grad = item.value().grad();
    if (is_frozen_name(item.key())) {
      EXPECT_FALSE(grad.defined()) << item.key();
    } else {
      ASSERT_TRUE(grad.defined()) << item.key();
      EXPECT_TRUE(grad.isfinite().all().item<bool>()) << item.key();
      EXPECT_GT(grad.abs().sum().item<double>(), 0.0) << item.key();
    }
  }
}

TEST(FastCifarModel, ForwardIsAirbenchsNetwork) {
  // Recomputes the forward pass from the named parameters and buffers in eval mode: whiten conv + GELU,
  // per group conv -> maxpool -> BN -> GELU -> conv -> BN -> GELU, global max pool, linear scaled by 1/9.
  auto net = test::build(ModelName::fast_cifar, {3, 32, 32, 4}, 4);
  net->initialize_from_data(at::randn({8, 3, 32, 32}));
  net->train();
  for (int i = 0; i < 3; ++i) net->forward(at::randn({4, 3, 32, 32}));  // non-trivial running statistics
  net->eval();
  const auto p = net->named_parameters();
  const auto b = net->named_buffers();
  auto norm = [&](const at::Tensor& h, const std::string& name) {
    return at::batch_norm(h, p[name + ".weight"], p[name + ".bias"], b[name + ".running_mean"],
                          b[name + ".running_var"], false, 0.0, 1e-12, false);
  };
  const at::Tensor x = at::randn({2, 3, 32, 32});
  at::Tensor h = at::gelu(at::conv2d(x, p["whiten.weight"], p["whiten.bias"]));
  for (const char* group : {"group1", "group2", "group3"}) {
    const std::string g = group;
    h = at::max_pool2d(at::conv2d(h, p[g + ".conv1.weight"], {}, 1, 1), 2);
    h = at::gelu(norm(h, g + ".norm1"));
    h = at::gelu(norm(at::conv2d(h, p[g + ".conv2.weight"], {}, 1, 1), g + ".norm2"));
  }
  const at::Tensor features = std::get<0>(at::adaptive_max_pool2d(h, {1, 1})).flatten(1);
  const at::Tensor expected = at::linear(features, p["fc.weight"]) / 9.0;
  EXPECT_TRUE(at::allclose(net->forward(x), expected, 1e-5, 1e-6));
}

TEST(FastCifarModel, RejectsImagesTooSmallWithTheModelName) {
  try {
    test::build(ModelName::fast_cifar, {3, 8, 8, 10});
    FAIL() << "expected ft::Error";
  } catch (const Error& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("fast_cifar"), std::string::npos) << message;
    EXPECT_NE(message.find("8x8"), std::string::npos) << message;
  }
}

TEST(FastCifarModel, RejectsFusedConvRelu) {
  try {
    test::build(ModelName::fast_cifar, {}, 8, ConvReluKernel::fused);
    FAIL() << "expected ft::Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("model.conv_relu"), std::string::npos) << e.what();
  }
}

ModelConfig fast_config(int width) {
  ModelConfig config;
  config.name = ModelName::fast_cifar;
  config.width = width;
  return config;
}

// airbench94_muon's head and whitening start: logits over the head's width instead of 9, the head's weights at
// standard deviation 1, the whitening bias as a default conv's (uniform in +-1/sqrt(12)), kept by the fit.
TEST(FastCifarModel, MuonVariantsOfTheHeadAndTheWhiteningStart) {
  ModelConfig config = fast_config(8);
  at::manual_seed(5);
  auto plain = make_network(config, {});
  config.logit_divisor = 32;
  config.head_unit_std = true;
  config.whiten_bias_uniform = true;
  at::manual_seed(5);
  auto muon = make_network(config, {});
  const auto pp = plain->named_parameters(), mp = muon->named_parameters();
  EXPECT_NEAR(mp["fc.weight"].std().item<double>(), 1.0, 1e-6);
  EXPECT_TRUE(at::allclose(mp["fc.weight"], pp["fc.weight"] / pp["fc.weight"].std()));
  const at::Tensor bias = mp["whiten.bias"].clone();
  EXPECT_GT(bias.abs().min().item<double>(), 0.0);
  EXPECT_LE(bias.abs().max().item<double>(), 1.0 / std::sqrt(12.0));
  EXPECT_TRUE(at::equal(pp["whiten.bias"], at::zeros_like(bias)));
  const at::Tensor images = at::randn({8, 3, 32, 32});
  plain->initialize_from_data(images), muon->initialize_from_data(images);
  EXPECT_TRUE(at::equal(mp["whiten.bias"], bias)) << "the fit replaced the bias";
  EXPECT_TRUE(at::equal(pp["whiten.bias"], at::zeros_like(bias)));
  // The same network but for the head's start and the divisor: logits scale by 9 / 32 and std(fc) ratio.
  {
    at::NoGradGuard no_grad;
    mp["fc.weight"].copy_(pp["fc.weight"]), mp["whiten.bias"].copy_(pp["whiten.bias"]);
  }
  plain->eval(), muon->eval();
  const at::Tensor x = at::randn({2, 3, 32, 32});
  EXPECT_TRUE(at::allclose(muon->forward(x), plain->forward(x) * (9.0 / 32.0), 1e-5, 1e-7));
}

TEST(FastCifarModel, HeadRateAndTheWhiteningBiasOwnDecayAreRules) {
  ModelConfig config = fast_config(8);
  config.head_lr_scale = 12.5;
  config.whiten_bias_decay = true;
  const auto rules = make_network(config, {})->parameter_rules();
  ASSERT_EQ(rules.count("fc.weight"), 1u);
  EXPECT_DOUBLE_EQ(rules.at("fc.weight").lr_scale, 12.5);
  EXPECT_FALSE(rules.at("fc.weight").own_decay);
  EXPECT_TRUE(rules.at("whiten.bias").own_decay);
  EXPECT_EQ(rules.at("whiten.bias").train_epochs, 3);
  const auto plain = make_network(fast_config(8), {})->parameter_rules();
  EXPECT_EQ(plain.count("fc.weight"), 0u);
  EXPECT_FALSE(plain.at("whiten.bias").own_decay);
}

}  // namespace
}  // namespace ft
