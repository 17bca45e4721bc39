// Tests of the fused max-pool -> BatchNorm -> GELU against ATen's composition (max_pool2d -> batch_norm -> gelu,
// with autograd): outputs, input/weight/bias gradients and running statistics, on the CPU reference in float64,
// float32 and float16, NCHW and channels_last, training and eval; on a GPU the CUDA kernels too.
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "model_test_util.h"
#include "config/schema.h"
#include "models/pool_norm_gelu.h"
#include "runtime/error.h"

namespace ft::pool_norm_gelu_test {
namespace {

struct Case {
  std::vector<std::int64_t> input;  // N, C, H, W
  int pool;
  bool channels_last;
};

const std::vector<Case> kCases = {
    {{2, 3, 8, 8}, 2, false},  // even sides
    {{3, 4, 7, 9}, 2, true},   // odd sides: the last row and column belong to no window
    {{2, 5, 6, 6}, 1, false},  // no pooling (the block's second norm)
    {{4, 2, 5, 3}, 1, true},
    {{1, 3, 4, 2}, 2, true},   // one image, a 2x1 pooled map: two values per channel
};

std::string describe(const Case& c, bool training) {
  std::ostringstream out;
  out << "input " << at::IntArrayRef(c.input) << " pool " << c.pool << (c.channels_last ? " channels_last" : " NCHW")
      << (training ? " training" : " eval");
  return out.str();
}

// Inputs, BatchNorm tensors and an output gradient, twice: one set for each side, identical.
struct Side {
  at::Tensor x, weight, bias, running_mean, running_var;
};

Side make_side(const Case& c, const at::TensorOptions& options, const at::TensorOptions& channel_options) {
  at::manual_seed(21);
  Side s;
  s.x = at::randn(c.input, options.dtype(at::kFloat)).mul_(2).add_(0.5).to(options.dtype().toScalarType());
  if (c.channels_last) s.x = s.x.contiguous(at::MemoryFormat::ChannelsLast);
  s.x.requires_grad_(true);
  const std::int64_t channels = c.input[1];
  s.weight = (at::rand({channels}, channel_options) + 0.5).requires_grad_(true);
  s.bias = (at::randn({channels}, channel_options) * 0.3).requires_grad_(true);
  s.running_mean = at::randn({channels}, channel_options) * 0.1;
  s.running_var = at::rand({channels}, channel_options) + 0.5;
  return s;
}

Side copy_of(const Side& s) {
  Side t;
  t.x = s.x.detach().clone(at::MemoryFormat::Preserve).requires_grad_(true);
  t.weight = s.weight.detach().clone().requires_grad_(true);
  t.bias = s.bias.detach().clone().requires_grad_(true);
  t.running_mean = s.running_mean.clone();
  t.running_var = s.running_var.clone();
  return t;
}

constexpr double kMomentum = 0.4, kEps = 1e-5;

at::Tensor aten_side(Side& s, const Case& c, bool training) {
  const at::Tensor pooled = c.pool == 2 ? at::max_pool2d(s.x, 2) : s.x;
  return at::gelu(at::batch_norm(pooled, s.weight, s.bias, s.running_mean, s.running_var, training, kMomentum, kEps,
                                 false));
}

at::Tensor fused_side(Side& s, const Case& c, bool training) {
  return fused_pool_norm_gelu(s.x, {s.weight, s.bias, s.running_mean, s.running_var, kMomentum, kEps, training, c.pool});
}

struct Tolerance {
  double output, grad_x, grad_channel, statistics;
};

void expect_close(const at::Tensor& actual, const at::Tensor& expected, double tolerance, const char* what) {
  ASSERT_EQ(actual.sizes(), expected.sizes()) << what;
  const double scale = std::max(1.0, expected.to(at::kDouble).abs().max().item<double>());
  const double off = (actual.to(at::kDouble) - expected.to(at::kDouble)).abs().max().item<double>();
  EXPECT_LE(off, tolerance * scale) << what << " differs by " << off << " (scale " << scale << ")";
}

// Forward, the running statistics it moved, and the gradients of sum(y * g) for a fixed random g.
void expect_equal_to_aten(const Case& c, bool training, const at::TensorOptions& options,
                          const at::TensorOptions& channel_options, const Tolerance& t) {
  SCOPED_TRACE(describe(c, training));
  Side a = make_side(c, options, channel_options);
  Side f = copy_of(a);
  const at::Tensor expected = aten_side(a, c, training);
  const at::Tensor actual = fused_side(f, c, training);
  EXPECT_EQ(actual.scalar_type(), expected.scalar_type());
  EXPECT_EQ(actual.is_contiguous(at::MemoryFormat::ChannelsLast) && !actual.is_contiguous(), c.channels_last);
  expect_close(actual, expected, t.output, "output");
  expect_close(f.running_mean, a.running_mean, t.statistics, "running mean");
  expect_close(f.running_var, a.running_var, t.statistics, "running variance");
  at::manual_seed(22);
  const at::Tensor g = at::randn(expected.sizes(), expected.options().dtype(at::kFloat)).to(expected.scalar_type());
  (expected * g).sum().backward();
  (actual * g).sum().backward();
  expect_close(f.x.grad(), a.x.grad(), t.grad_x, "input gradient");
  expect_close(f.weight.grad(), a.weight.grad(), t.grad_channel, "weight gradient");
  expect_close(f.bias.grad(), a.bias.grad(), t.grad_channel, "bias gradient");
}

TEST(PoolNormGelu, EqualsATenInFloat64) {
  const auto options = at::TensorOptions().dtype(at::kDouble);
  for (const auto& c : kCases)
    for (bool training : {true, false}) expect_equal_to_aten(c, training, options, options, {1e-12, 1e-11, 1e-11, 1e-14});
}

TEST(PoolNormGelu, EqualsATenInFloat32) {
  const auto options = at::TensorOptions().dtype(at::kFloat);
  for (const auto& c : kCases)
    for (bool training : {true, false}) expect_equal_to_aten(c, training, options, options, {2e-6, 1e-5, 1e-5, 1e-6});
}

// float16 maps with float32 BatchNorm tensors, as under autocast: ATen rounds the normalised values to float16
// before GELU, the fused op does not, so outputs differ by a float16 rounding or two.
TEST(PoolNormGelu, EqualsATenInFloat16) {
  for (const auto& c : kCases)
    for (bool training : {true, false})
      expect_equal_to_aten(c, training, at::TensorOptions().dtype(at::kHalf), at::TensorOptions().dtype(at::kFloat),
                           {4e-3, 1e-2, 1e-2, 1e-5});
}

// Ties go to the window's first maximum (its gradient there, none at the other), as in ATen. Three windows per
// channel: with two, BatchNorm's input gradient is exactly zero.
TEST(PoolNormGelu, TiedMaximaPassTheGradientToTheFirst) {
  for (bool channels_last : {false, true}) {
    at::Tensor x = at::tensor({1.0, 3.0, 0.0, -1.0, 5.0, 5.0, 3.0, 3.0, 2.0, 2.0, 5.0, 5.0}, at::kDouble).view({1, 1, 2, 6});
    x = at::cat({x, -x}, 1);
    if (channels_last) x = x.contiguous(at::MemoryFormat::ChannelsLast);
    const at::Tensor fx = x.clone(at::MemoryFormat::Preserve).requires_grad_(true);
    const at::Tensor ax = x.clone(at::MemoryFormat::Preserve).requires_grad_(true);
    const auto weight = at::tensor({1.5, 0.5}, at::kDouble), bias = at::tensor({0.1, -0.2}, at::kDouble);
    const at::Tensor g = at::tensor({1.0, -2.0, 0.5, 0.3, 1.0, -1.0}, at::kDouble).view({1, 2, 1, 3});
    (fused_pool_norm_gelu(fx, {weight, bias, {}, {}, kMomentum, kEps, true, 2}) * g).sum().backward();
    (at::gelu(at::batch_norm(at::max_pool2d(ax, 2), weight, bias, {}, {}, true, kMomentum, kEps, false)) * g)
        .sum()
        .backward();
    EXPECT_TRUE(at::allclose(fx.grad(), ax.grad(), 1e-12, 1e-12)) << fx.grad() << ax.grad();
    EXPECT_EQ(at::count_nonzero(fx.grad()).item<std::int64_t>(), 6);  // one element per window
  }
}

TEST(PoolNormGelu, RejectsWhatItCannotNormalise) {
  const PoolNormArgs args{{}, {}, {}, {}, kMomentum, kEps, true, 2};
  EXPECT_THROW(fused_pool_norm_gelu(at::randn({2, 3, 4}), args), Error);                     // not 4-d
  EXPECT_THROW(fused_pool_norm_gelu(at::randn({1, 3, 1, 4}), args), Error);                  // no 2x2 window
  EXPECT_THROW(fused_pool_norm_gelu(at::randn({1, 3, 2, 3}), args), Error);                  // one value per channel
  EXPECT_NO_THROW(fused_pool_norm_gelu(at::randn({1, 3, 2, 4}), args));                      // two
  PoolNormArgs eval = args;
  eval.training = false, eval.running_mean = at::zeros({3}), eval.running_var = at::ones({3});
  EXPECT_NO_THROW(fused_pool_norm_gelu(at::randn({1, 3, 2, 3}), eval));                      // eval: one is enough
  PoolNormArgs three = args;
  three.pool = 3;
  EXPECT_THROW(fused_pool_norm_gelu(at::randn({2, 3, 6, 6}), three), Error);
  PoolNormArgs wrong = args;
  wrong.weight = at::ones({4});
  EXPECT_THROW(fused_pool_norm_gelu(at::randn({2, 3, 4, 4}), wrong), Error);
}

// The layer: fused or ATen's, the same output, gradients, running statistics and batch count.
TEST(PoolNormGeluLayer, FusedAndATenLayersAgree) {
  for (int pool : {1, 2}) {
    SCOPED_TRACE("pool " + std::to_string(pool));
    auto make = [] {
      SyncBatchNorm2d bn(torch::nn::BatchNorm2dOptions(4).momentum(kMomentum).eps(1e-12));
      at::NoGradGuard no_grad;
      bn->bias.normal_();
      return bn;
    };
    at::manual_seed(4);
    SyncBatchNorm2d fused = make();
    at::manual_seed(4);
    SyncBatchNorm2d aten = make();
    const at::Tensor x = at::randn({3, 4, 6, 6}).contiguous(at::MemoryFormat::ChannelsLast);
    const at::Tensor fx = x.clone().requires_grad_(true), ax = x.clone().requires_grad_(true);
    for (int step = 0; step < 2; ++step) {
      pool_norm_gelu(fx, *fused, pool, PoolNormGeluKernel::fused).square().sum().backward();
      pool_norm_gelu(ax, *aten, pool, PoolNormGeluKernel::aten).square().sum().backward();
    }
    EXPECT_TRUE(at::allclose(fx.grad(), ax.grad(), 1e-4, 1e-5));
    EXPECT_TRUE(at::allclose(fused->bias.grad(), aten->bias.grad(), 1e-4, 1e-4));
    EXPECT_TRUE(at::allclose(fused->running_mean, aten->running_mean, 1e-5, 1e-6));
    EXPECT_TRUE(at::allclose(fused->running_var, aten->running_var, 1e-5, 1e-6));
    EXPECT_EQ(fused->num_batches_tracked.item<std::int64_t>(), 2);
    EXPECT_EQ(aten->num_batches_tracked.item<std::int64_t>(), 2);
    fused->eval(), aten->eval();
    EXPECT_TRUE(at::allclose(pool_norm_gelu(x, *fused, pool, PoolNormGeluKernel::fused),
                             pool_norm_gelu(x, *aten, pool, PoolNormGeluKernel::aten), 1e-5, 1e-6));
    EXPECT_EQ(fused->num_batches_tracked.item<std::int64_t>(), 2) << "eval counted a batch";
  }
}

// The layer runs the path it is given: the fused kernels refuse a BatchNorm with a cumulative average (momentum
// None), which ATen's composition takes, after either max-pool.
TEST(PoolNormGeluLayer, RunsThePathItIsGiven) {
  SyncBatchNorm2d cumulative(torch::nn::BatchNorm2dOptions(4).momentum(std::nullopt));
  const at::Tensor x = at::randn({2, 4, 4, 4});
  for (int pool : {1, 2}) {
    EXPECT_NO_THROW(pool_norm_gelu(x, *cumulative, pool, PoolNormGeluKernel::aten)) << "pool " << pool;
    EXPECT_NO_THROW(pool_norm_gelu(x, *cumulative, pool, PoolNormGeluKernel::pool)) << "pool " << pool;
    EXPECT_THROW(pool_norm_gelu(x, *cumulative, pool, PoolNormGeluKernel::fused), Error) << "pool " << pool;
  }
}

TEST(PoolNormGeluLayer, FusedOnlyWhenAskedAndNeverForSynchronisedBatchNorm) {
  EXPECT_TRUE(fuses_pool_norm_gelu(PoolNormGeluKernel::fused, false));
  EXPECT_FALSE(fuses_pool_norm_gelu(PoolNormGeluKernel::fused, true));
  EXPECT_FALSE(fuses_pool_norm_gelu(PoolNormGeluKernel::aten, false));
  EXPECT_FALSE(fuses_pool_norm_gelu(PoolNormGeluKernel::aten, true));
  EXPECT_FALSE(fuses_pool_norm_gelu(PoolNormGeluKernel::pool, false));
  EXPECT_FALSE(fuses_pool_norm_gelu(PoolNormGeluKernel::pool, true));
  EXPECT_EQ(ModelConfig{}.pool_norm_gelu, PoolNormGeluKernel::aten) << "the default";
}

// A fast net of `width` with the layers `kernel` picks, on `device`; the same weights for the same width.
std::shared_ptr<Network> fast_net(PoolNormGeluKernel kernel, int width, const at::Device& device) {
  at::manual_seed(9);
  ModelConfig config;
  config.name = ModelName::fast_cifar;
  config.width = width;
  config.pool_norm_gelu = kernel;
  auto net = make_network(config, {3, 32, 32, 10});
  net->to(device);
  return net;
}

// fast_cifar with the fused layers: the same logits and gradients as with ATen's (training, then eval).
TEST(PoolNormGeluLayer, FastCifarFusedEqualsATen) {
  auto fused = fast_net(PoolNormGeluKernel::fused, 8, at::kCPU), aten = fast_net(PoolNormGeluKernel::aten, 8, at::kCPU);
  const at::Tensor x = at::randn({4, 3, 32, 32});
  const at::Tensor fy = fused->forward(x), ay = aten->forward(x);
  EXPECT_TRUE(at::allclose(fy, ay, 1e-4, 1e-5)) << (fy - ay).abs().max();
  fy.square().sum().backward();
  ay.square().sum().backward();
  const auto fp = fused->named_parameters(), ap = aten->named_parameters();
  for (const auto& item : ap) {
    if (!item.value().grad().defined()) continue;
    const at::Tensor& want = item.value().grad();
    EXPECT_TRUE(at::allclose(fp[item.key()].grad(), want, 1e-3, 1e-4 * std::max(1.0, want.abs().max().item<double>())))
        << item.key();
  }
  fused->eval(), aten->eval();
  EXPECT_TRUE(at::allclose(fused->forward(x), aten->forward(x), 1e-4, 1e-5));
}

// On a GPU: the CUDA kernels against ATen's CUDA composition, float32, float16 and bfloat16, both layouts, and
// the fast net's own sizes (a 31x31 map pooled to 15x15, a 7x7 one to 3x3).
TEST(PoolNormGeluCuda, KernelsEqualATen) {
  if (!at::hasCUDA()) GTEST_SKIP() << "no CUDA device";
  std::vector<Case> cases = kCases;
  cases.push_back({{64, 64, 31, 31}, 2, true});
  cases.push_back({{64, 256, 7, 7}, 2, true});
  cases.push_back({{64, 256, 3, 3}, 1, true});
  cases.push_back({{8, 40, 16, 16}, 2, false});  // a partial channel tile
  const auto cuda = at::TensorOptions().device(at::kCUDA);
  for (const auto& c : cases)
    for (bool training : {true, false}) {
      expect_equal_to_aten(c, training, cuda.dtype(at::kFloat), cuda.dtype(at::kFloat), {1e-5, 1e-4, 1e-4, 1e-5});
      expect_equal_to_aten(c, training, cuda.dtype(at::kHalf), cuda.dtype(at::kFloat), {4e-3, 1e-2, 1e-2, 1e-5});
      expect_equal_to_aten(c, training, cuda.dtype(at::kBFloat16), cuda.dtype(at::kFloat), {3e-2, 6e-2, 6e-2, 1e-5});
    }
}

// On a GPU a whole fast net runs through the kernels and equals ATen's.
TEST(PoolNormGeluCuda, FastCifarThroughTheKernelsEqualsATen) {
  if (!at::hasCUDA()) GTEST_SKIP() << "no CUDA device";
  const at::Device cuda(at::kCUDA, 0);
  auto fused = fast_net(PoolNormGeluKernel::fused, 16, cuda), aten = fast_net(PoolNormGeluKernel::aten, 16, cuda);
  const at::Tensor x = at::randn({32, 3, 32, 32}, at::kCUDA).contiguous(at::MemoryFormat::ChannelsLast);
  const at::Tensor fy = fused->forward(x), ay = aten->forward(x);
  EXPECT_TRUE(at::allclose(fy, ay, 1e-3, 1e-4)) << (fy - ay).abs().max();
}

}  // namespace
}  // namespace ft::pool_norm_gelu_test
