// Tests of the fused conv+bias+ReLU operator and the ConvReLU block: forward and input/weight/bias
// gradients equal ATen's conv2d + relu (float64 on CPU, plus finite differences), and on a GPU the CUDA kernel too.
#include <gtest/gtest.h>
#include <torch/csrc/autograd/autograd.h>

#include <sstream>
#include <string>
#include <vector>

#include "model_test_util.h"
#include "models/conv_relu_block.h"
#include "models/fused_conv_relu.h"
#include "runtime/error.h"
#include "optim/precision.h"

namespace ft {
namespace {

struct Case {
  std::vector<int64_t> input;   // N, C, H, W
  std::vector<int64_t> weight;  // O, C, kh, kw
  std::vector<int64_t> stride, padding;
  bool bias;
};

const std::vector<Case> kCases = {
    {{2, 3, 8, 8}, {4, 3, 3, 3}, {1, 1}, {1, 1}, true},      // the models' conv3x3 "same"
    {{1, 2, 9, 7}, {3, 2, 5, 5}, {2, 2}, {2, 2}, true},      // larger kernel, stride 2, odd sides
    {{2, 4, 6, 6}, {5, 4, 1, 1}, {1, 1}, {0, 0}, true},      // 1x1
    {{1, 3, 7, 10}, {2, 3, 3, 2}, {2, 1}, {1, 0}, false},    // rectangular kernel, uneven stride, no bias
    {{3, 1, 5, 5}, {2, 1, 5, 5}, {3, 3}, {0, 0}, true},      // kernel covering the whole image
};

std::string describe(const Case& c) {
  std::ostringstream out;
  out << "input " << at::IntArrayRef(c.input) << " weight " << at::IntArrayRef(c.weight) << " stride "
      << at::IntArrayRef(c.stride) << " padding " << at::IntArrayRef(c.padding) << (c.bias ? "" : " no bias");
  return out.str();
}

struct Inputs {
  at::Tensor x, w, b;
};

Inputs make_inputs(const Case& c, const at::TensorOptions& options) {
  Inputs in;
  in.x = at::randn(c.input, options).requires_grad_(true);
  in.w = at::randn(c.weight, options).mul_(0.3).requires_grad_(true);
  if (c.bias) in.b = at::randn({c.weight[0]}, options).mul_(0.5).requires_grad_(true);
  return in;
}

at::Tensor reference(const Inputs& in, const Case& c) {
  return at::relu(at::conv2d(in.x, in.w, in.b, c.stride, c.padding));
}

at::Tensor fused(const Inputs& in, const Case& c) { return fused_conv_relu(in.x, in.w, in.b, c.stride, c.padding); }

// Gradients of sum(y * g) for a fixed random g, with respect to x, w and b.
std::vector<at::Tensor> gradients(const at::Tensor& y, const Inputs& in, const at::Tensor& g) {
  std::vector<at::Tensor> wrt = {in.x, in.w};
  if (in.b.defined()) wrt.push_back(in.b);
  return torch::autograd::grad({(y * g).sum()}, wrt);
}

TEST(FusedConvReLUModel, ForwardEqualsConv2dReluInFloat64) {
  at::manual_seed(3);
  for (const auto& c : kCases) {
    SCOPED_TRACE(describe(c));
    const Inputs in = make_inputs(c, at::kDouble);
    const at::Tensor expected = reference(in, c);
    const at::Tensor actual = fused(in, c);
    ASSERT_EQ(actual.sizes(), expected.sizes());
    EXPECT_TRUE(at::allclose(actual, expected, 1e-12, 1e-12));
    EXPECT_TRUE((actual == 0).any().item<bool>());  // the ReLU was exercised
  }
}

TEST(FusedConvReLUModel, GradientsEqualConv2dReluInFloat64) {
  at::manual_seed(4);
  for (const auto& c : kCases) {
    SCOPED_TRACE(describe(c));
    const Inputs in = make_inputs(c, at::kDouble);
    const at::Tensor expected_y = reference(in, c);
    const at::Tensor g = at::randn(expected_y.sizes(), at::kDouble);
    const auto expected = gradients(expected_y, in, g);
    const auto actual = gradients(fused(in, c), in, g);
    ASSERT_EQ(actual.size(), expected.size());
    for (std::size_t i = 0; i < actual.size(); ++i)
      EXPECT_TRUE(at::allclose(actual[i], expected[i], 1e-10, 1e-12)) << "gradient " << i;
  }
}

TEST(FusedConvReLUModel, GradientsMatchFiniteDifferences) {
  at::manual_seed(5);
  const Case c = {{1, 2, 5, 5}, {3, 2, 3, 3}, {2, 2}, {1, 1}, true};
  const Inputs in = make_inputs(c, at::kDouble);
  const at::Tensor g = at::randn(fused(in, c).sizes(), at::kDouble);
  const auto analytic = gradients(fused(in, c), in, g);
  const double eps = 1e-6;
  const std::vector<at::Tensor> wrt = {in.x, in.w, in.b};
  at::NoGradGuard no_grad;
  for (std::size_t t = 0; t < wrt.size(); ++t) {
    const at::Tensor flat = wrt[t].view({-1});
    for (int64_t i = 0; i < flat.numel(); ++i) {
      const double saved = flat[i].item<double>();
      flat[i].fill_(saved + eps);
      const double plus = (fused(in, c) * g).sum().item<double>();
      flat[i].fill_(saved - eps);
      const double minus = (fused(in, c) * g).sum().item<double>();
      flat[i].fill_(saved);
      EXPECT_NEAR(analytic[t].view({-1})[i].item<double>(), (plus - minus) / (2 * eps), 1e-6)
          << "tensor " << t << " element " << i;
    }
  }
}

TEST(FusedConvReLUModel, Float32CpuPathAgrees) {
  at::manual_seed(6);
  const Case& c = kCases[1];
  const Inputs in = make_inputs(c, at::kFloat);
  EXPECT_TRUE(at::allclose(fused(in, c), reference(in, c), 1e-5, 1e-5));
}

TEST(FusedConvReLUModel, RejectsMismatchedShapesAndTypes) {
  const at::Tensor x = at::randn({1, 3, 8, 8});
  EXPECT_THROW(fused_conv_relu(x, at::randn({4, 2, 3, 3}), at::randn({4}), {1, 1}, {1, 1}), Error);  // channels
  EXPECT_THROW(fused_conv_relu(x, at::randn({4, 3, 3, 3}), at::randn({5}), {1, 1}, {1, 1}), Error);  // bias
  EXPECT_THROW(fused_conv_relu(x, at::randn({4, 3, 9, 9}), at::randn({4}), {1, 1}, {0, 0}), Error);  // too big
  EXPECT_THROW(fused_conv_relu(x.to(at::kHalf), at::randn({4, 3, 3, 3}).to(at::kHalf), at::Tensor(), {1, 1}, {1, 1}),
               Error);
}

TEST(FusedConvReLUModel, ConvReluBlockHasConv2dParametersForBothKernels) {
  for (const auto kernel : {ConvReluKernel::aten, ConvReluKernel::fused}) {
    ConvReLU block(ConvReLUOptions{3, 8, 3, 1, 1, kernel});
    EXPECT_EQ(test::parameter_names(*block), (std::vector<std::string>{"weight", "bias"}));
    EXPECT_EQ(block->weight.sizes(), (std::vector<int64_t>{8, 3, 3, 3}));
    EXPECT_EQ(block->bias.sizes(), (std::vector<int64_t>{8}));
  }
}

TEST(FusedConvReLUModel, SimpleCnnGivesTheSameLogitsWithEitherKernel) {
  at::manual_seed(7);
  auto aten = test::build(ModelName::simple_cnn, {3, 32, 32, 10}, 64, ConvReluKernel::aten);
  auto fused_net = test::build(ModelName::simple_cnn, {3, 32, 32, 10}, 64, ConvReluKernel::fused);
  {
    at::NoGradGuard no_grad;
    auto source = aten->named_parameters();
    for (auto& item : fused_net->named_parameters()) item.value().copy_(source[item.key()]);
  }
  aten->eval();
  fused_net->eval();
  const at::Tensor x = at::randn({2, 3, 32, 32});
  EXPECT_TRUE(at::allclose(fused_net->forward(x), aten->forward(x), 1e-4, 1e-5));
}

// Mixed precision: a batch norm under autocast hands the fused layer half or bfloat16 activations (fp16 on a GPU,
// bf16 on the CPU) while its weights stay float32. The layer follows autocast's float32 policy for both: it
// runs, returns float32 close to the float32 result, and its float32 weights get float32 gradients.
TEST(FusedConvReLUModel, FollowsAutocastWithHalfInputsAndFloatWeights) {
  for (const at::ScalarType low : {at::kBFloat16, at::kHalf}) {
    at::manual_seed(9);
    const Case& c = kCases[0];
    const Inputs in = make_inputs(c, at::kFloat);
    const at::Tensor expected = fused(in, c).detach();
    at::Tensor y;
    {
      AutocastScope autocast(at::Device(at::kCPU), low);
      const at::Tensor low_x = in.x.to(low);  // what a layer before it returns under autocast
      y = fused_conv_relu(low_x, in.w, in.b, c.stride, c.padding);
    }
    EXPECT_EQ(y.scalar_type(), at::kFloat) << low;
    EXPECT_TRUE(at::allclose(y.detach(), expected, 0.05, 0.05))
        << low << ": " << (y.detach() - expected).abs().max();
    const auto grads = gradients(y, in, at::randn_like(expected));
    EXPECT_EQ(grads[1].scalar_type(), at::kFloat) << low;
    EXPECT_TRUE(at::isfinite(grads[1]).all().item<bool>()) << low;
    // Outside autocast a dtype mix is still refused.
    EXPECT_THROW(fused_conv_relu(in.x.to(low), in.w, in.b, c.stride, c.padding), Error) << low;
  }
}

// A conv_stack with a batch norm before a fused layer trains a step under bf16 autocast.
TEST(FusedConvReLUModel, ConvStackWithBatchNormTrainsUnderAutocast) {
  at::manual_seed(10);
  ModelConfig config;
  config.name = ModelName::conv_stack;
  config.conv_relu = ConvReluKernel::fused;
  LayerSpec conv, bn, relu, flatten, linear;
  conv.type = LayerType::conv;
  conv.out = 4;
  bn.type = LayerType::bn;
  relu.type = LayerType::relu;
  flatten.type = LayerType::flatten;
  linear.type = LayerType::linear;
  config.layers = {conv, bn, relu, conv, relu, flatten, linear};
  auto net = make_network(config, {3, 8, 8, 3});
  at::Tensor loss;
  {
    AutocastScope autocast(at::Device(at::kCPU), at::kBFloat16);
    loss = at::cross_entropy_loss(net->forward(at::randn({4, 3, 8, 8})).to(at::kFloat), at::tensor({0, 1, 2, 0}, at::kLong));
  }
  loss.backward();
  for (const auto& p : net->parameters()) {
    ASSERT_TRUE(p.grad().defined());
    EXPECT_EQ(p.grad().scalar_type(), at::kFloat);
    EXPECT_TRUE(at::isfinite(p.grad()).all().item<bool>());
  }
}

TEST(FusedConvReLUModel, CudaKernelEqualsConv2dRelu) {
  if (!at::hasCUDA()) GTEST_SKIP() << "no CUDA device";
  at::globalContext().setAllowTF32CuDNN(false);  // a full-float32 reference
  at::manual_seed(8);
  std::vector<Case> cases = kCases;
  cases.push_back({{4, 64, 32, 32}, {128, 64, 3, 3}, {1, 1}, {1, 1}, true});  // several channel steps and tiles
  cases.push_back({{2, 3, 96, 96}, {13, 3, 7, 7}, {2, 2}, {3, 3}, true});     // partial output-channel group
  cases.push_back({{1, 2, 64, 64}, {2, 2, 31, 31}, {8, 8}, {15, 15}, true});  // patch too big for a 16x16 tile
  for (const auto& c : cases) {
    SCOPED_TRACE(describe(c));
    const Inputs in = make_inputs(c, at::TensorOptions().dtype(at::kFloat).device(at::kCUDA));
    const at::Tensor expected_y = reference(in, c);
    const at::Tensor actual_y = fused(in, c);
    EXPECT_TRUE(at::allclose(actual_y, expected_y, 1e-4, 1e-4))
        << "max difference " << (actual_y - expected_y).abs().max().item<float>();
    const at::Tensor g = at::randn(expected_y.sizes(), expected_y.options());
    const auto expected = gradients(expected_y, in, g);
    const auto actual = gradients(actual_y, in, g);
    for (std::size_t i = 0; i < actual.size(); ++i)
      EXPECT_TRUE(at::allclose(actual[i], expected[i], 1e-3, 1e-3)) << "gradient " << i;
  }
}

}  // namespace
}  // namespace ft
