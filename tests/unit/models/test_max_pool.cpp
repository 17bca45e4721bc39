// Tests of max_pool2x2 against ATen's max_pool2d(x, 2) with autograd: the same maxima, window positions and
// gradients, on the CPU reference in float32, float64 and float16, NCHW and channels_last; on a GPU the kernels too.
#include <gtest/gtest.h>
#include <torch/csrc/autograd/function.h>

#include <cmath>
#include <string>
#include <vector>

#include "model_test_util.h"
#include "config/schema.h"
#include "models/max_pool.h"
#include "models/pool_norm_gelu.h"
#include "runtime/error.h"

namespace ft::max_pool_test {
namespace {

struct Case {
  std::vector<std::int64_t> input;  // N, C, H, W
  bool channels_last;
};

const std::vector<Case> kCases = {
    {{2, 3, 8, 8}, false}, {{3, 4, 7, 9}, true},    // even sides; odd: the last row and column in no window
    {{1, 8, 2, 2}, true},  {{2, 16, 5, 4}, true},  // one window; channels that fill a GPU thread's 16 bytes
    {{1, 12, 3, 3}, true}, {{2, 2, 6, 7}, false},  // channels that do not
};

std::string describe(const Case& c, at::ScalarType type) {
  return testing::PrintToString(c.input) + (c.channels_last ? " channels_last " : " NCHW ") + c10::toString(type);
}

// Few distinct values (ties in most windows), in `options`' type and the case's layout.
at::Tensor tied_input(const Case& c, const at::TensorOptions& options) {
  at::manual_seed(5);
  const at::Tensor x = at::randint(-3, 4, c.input, options.dtype(at::kFloat)).to(options.dtype().toScalarType());
  return x.contiguous(c.channels_last ? at::MemoryFormat::ChannelsLast : at::MemoryFormat::Contiguous);
}

// Forward and the input gradient for a random output gradient: exactly ATen's (a maximum is one of the inputs
// and each gradient lands whole on one element); the output in x's type and layout.
void expect_equal_to_aten(const Case& c, const at::TensorOptions& options) {
  SCOPED_TRACE(describe(c, options.dtype().toScalarType()));
  const at::Tensor x = tied_input(c, options).requires_grad_(true);
  const at::Tensor mine = x.detach().clone(at::MemoryFormat::Preserve).requires_grad_(true);
  const at::Tensor want = at::max_pool2d(x, 2), got = max_pool2x2(mine);
  EXPECT_EQ(got.scalar_type(), want.scalar_type());
  EXPECT_EQ(got.is_contiguous(at::MemoryFormat::ChannelsLast), c.channels_last);
  EXPECT_TRUE(at::equal(got, want));
  const at::Tensor dy = at::randn(want.sizes(), options.dtype(at::kFloat)).to(options.dtype().toScalarType());
  want.backward(dy);
  got.backward(dy);
  EXPECT_TRUE(at::equal(mine.grad(), x.grad()));
  EXPECT_EQ(mine.grad().is_contiguous(at::MemoryFormat::ChannelsLast), c.channels_last);
  // Outside autograd the op keeps no positions and still pools.
  const at::NoGradGuard no_grad;
  EXPECT_TRUE(at::equal(max_pool2x2(x.detach()), want.detach()));
}

TEST(MaxPool2x2Op, EqualsATenOnTheCpu) {
  for (const Case& c : kCases)
    for (at::ScalarType type : {at::kFloat, at::kDouble, at::kHalf})
      expect_equal_to_aten(c, at::TensorOptions().dtype(type));
}

// A window of equal values sends its gradient to the first; NaN propagates, and its gradient goes where ATen's
// index names.
TEST(MaxPool2x2Op, NaNAndTiesAsATen) {
  const at::Tensor x = at::tensor({5.f, 5.f, 1.f, NAN, 5.f, 5.f, 2.f, 3.f}).view({1, 1, 2, 4}).requires_grad_(true);
  const at::Tensor y = max_pool2x2(x);
  EXPECT_EQ(y[0][0][0][0].item<float>(), 5.f);
  EXPECT_TRUE(std::isnan(y[0][0][0][1].item<float>()));
  y.sum().backward();
  EXPECT_TRUE(at::equal(x.grad().flatten(), at::tensor({1.f, 0.f, 0.f, 1.f, 0.f, 0.f, 0.f, 0.f})));
  const at::Tensor ax = x.detach().clone().requires_grad_(true);
  at::max_pool2d(ax, 2).sum().backward();
  EXPECT_TRUE(at::equal(x.grad(), ax.grad()));
}

TEST(MaxPool2x2Op, RefusesWhatItCannotPool) {
  try {
    max_pool2x2(at::randn({3, 4, 4}));
    ADD_FAILURE() << "a 3-d input was pooled";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("max-pool 2x2: the input must be 4-d"), std::string::npos) << e.what();
  }
  try {
    max_pool2x2(at::randn({2, 3, 1, 6}));
    ADD_FAILURE() << "a 1x6 map was pooled";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("max-pool 2x2: a 1x6 map has no 2x2 window"), std::string::npos) << e.what();
  }
}

// The layer with `pool`: ATen's BatchNorm and GELU after the max-pool kernel, so exactly the aten layer's output,
// gradients and running statistics.
TEST(MaxPool2x2Op, PoolLayerEqualsATenLayer) {
  auto make = [] {
    at::manual_seed(4);
    SyncBatchNorm2d bn(torch::nn::BatchNorm2dOptions(4).momentum(0.3));
    return bn;
  };
  SyncBatchNorm2d mine = make(), aten = make();
  const at::Tensor x = at::randn({3, 4, 7, 6}).contiguous(at::MemoryFormat::ChannelsLast);
  const at::Tensor mx = x.clone().requires_grad_(true), ax = x.clone().requires_grad_(true);
  const at::Tensor my = pool_norm_gelu(mx, *mine, 2, PoolNormGeluKernel::pool);
  const at::Tensor ay = pool_norm_gelu(ax, *aten, 2, PoolNormGeluKernel::aten);
  EXPECT_TRUE(at::equal(my, ay));
  my.square().sum().backward();
  ay.square().sum().backward();
  EXPECT_TRUE(at::equal(mx.grad(), ax.grad()));
  EXPECT_TRUE(at::equal(mine->weight.grad(), aten->weight.grad()));
  EXPECT_TRUE(at::equal(mine->running_var, aten->running_var));
  EXPECT_EQ(mine->num_batches_tracked.item<std::int64_t>(), 1);
}

// The names of the autograd nodes that made y.
std::string graph_of(const at::Tensor& y) {
  std::string names;
  std::vector<torch::autograd::Node*> todo{y.grad_fn().get()};
  while (!todo.empty()) {
    torch::autograd::Node* node = todo.back();
    todo.pop_back();
    if (!node) continue;
    names += node->name() + " ";
    for (const auto& edge : node->next_edges()) todo.push_back(edge.function.get());
  }
  return names;
}

// Each choice runs its own max-pool in the layer and in the fast net: the kernel for pool, ATen's for aten and
// for the fused pair's fallback under a synchronised BatchNorm.
TEST(MaxPool2x2Op, PoolChoiceRunsTheKernel) {
  const at::Tensor x = at::randn({2, 4, 6, 6}).requires_grad_(true);
  SyncBatchNorm2d bn(torch::nn::BatchNorm2dOptions(4));
  const std::string pool = graph_of(pool_norm_gelu(x, *bn, 2, PoolNormGeluKernel::pool));
  const std::string aten = graph_of(pool_norm_gelu(x, *bn, 2, PoolNormGeluKernel::aten));
  EXPECT_NE(pool.find("MaxPool2x2Function"), std::string::npos) << pool;
  EXPECT_EQ(pool.find("MaxPool2DWithIndices"), std::string::npos) << pool;
  EXPECT_NE(aten.find("MaxPool2DWithIndices"), std::string::npos) << aten;
  EXPECT_EQ(aten.find("MaxPool2x2Function"), std::string::npos) << aten;
  const std::string unpooled = graph_of(pool_norm_gelu(x, *bn, 1, PoolNormGeluKernel::pool));
  EXPECT_EQ(unpooled.find("MaxPool"), std::string::npos) << unpooled;

  at::manual_seed(9);
  ModelConfig config;
  config.name = ModelName::fast_cifar, config.width = 8, config.pool_norm_gelu = PoolNormGeluKernel::pool;
  auto mine = make_network(config, {3, 32, 32, 10});
  at::manual_seed(9);
  config.pool_norm_gelu = PoolNormGeluKernel::aten;
  auto theirs = make_network(config, {3, 32, 32, 10});
  const at::Tensor images = at::randn({4, 3, 32, 32});
  const at::Tensor my = mine->forward(images), ay = theirs->forward(images);
  const std::string net = graph_of(my);
  std::size_t kernels = 0;
  const std::string node = "MaxPool2x2Function";
  for (std::size_t at = net.find(node); at != std::string::npos; at = net.find(node, at + 1)) ++kernels;
  EXPECT_EQ(kernels, 3u) << "one max-pool a group";
  EXPECT_TRUE(at::equal(my, ay)) << "the fast net with the kernel is the same function";
}

// On a GPU: the kernels against ATen's CUDA max-pool, float32, float16 and bfloat16, both layouts, the fast net's
// sizes (a 31x31 map of 64 channels, a 15x15 one of 256), channels that fill no 16 bytes and a map 2 bytes off
// alignment (both one channel a thread).
TEST(MaxPoolCuda, KernelsEqualATen) {
  if (!at::hasCUDA()) GTEST_SKIP() << "no CUDA device";
  std::vector<Case> cases = kCases;
  cases.push_back({{64, 64, 31, 31}, true});
  cases.push_back({{32, 256, 15, 15}, true});
  cases.push_back({{8, 40, 16, 16}, false});
  const auto cuda = at::TensorOptions().device(at::kCUDA);
  for (const Case& c : cases)
    for (at::ScalarType type : {at::kFloat, at::kHalf, at::kBFloat16}) expect_equal_to_aten(c, cuda.dtype(type));
  const Case odd{{4, 64, 9, 9}, true};
  const at::Tensor base = at::empty({4 * 64 * 9 * 9 + 1}, cuda.dtype(at::kHalf));
  const at::Tensor off = base.narrow(0, 1, 4 * 64 * 9 * 9).as_strided({4, 64, 9, 9}, {64 * 81, 1, 9 * 64, 64});
  off.copy_(tied_input(odd, cuda.dtype(at::kHalf)));
  ASSERT_NE(reinterpret_cast<std::uintptr_t>(off.data_ptr()) % 16, 0u);
  EXPECT_TRUE(at::equal(max_pool2x2(off), at::max_pool2d(off, 2)));
}

// On a GPU a whole fast net with the max-pool kernel equals ATen's, forward and weight gradients.
TEST(MaxPoolCuda, FastCifarWithThePoolKernelEqualsATen) {
  if (!at::hasCUDA()) GTEST_SKIP() << "no CUDA device";
  const at::Device cuda(at::kCUDA, 0);
  const auto net = [&](PoolNormGeluKernel kernel) {
    at::manual_seed(9);
    ModelConfig config;
    config.name = ModelName::fast_cifar, config.width = 16, config.pool_norm_gelu = kernel;
    auto n = make_network(config, {3, 32, 32, 10});
    n->to(cuda);
    return n;
  };
  auto mine = net(PoolNormGeluKernel::pool), aten = net(PoolNormGeluKernel::aten);
  const at::Tensor x = at::randn({32, 3, 32, 32}, at::kCUDA).contiguous(at::MemoryFormat::ChannelsLast);
  const at::Tensor my = mine->forward(x), ay = aten->forward(x);
  EXPECT_TRUE(at::allclose(my, ay, 1e-4, 1e-5)) << (my - ay).abs().max();
  my.square().sum().backward();
  ay.square().sum().backward();
  const auto mp = mine->named_parameters();
  for (const auto& item : aten->named_parameters()) {
    if (!item.value().grad().defined()) continue;
    const at::Tensor& want = item.value().grad();
    EXPECT_TRUE(at::allclose(mp[item.key()].grad(), want, 1e-3, 1e-4 * std::max(1.0, want.abs().max().item<double>())))
        << item.key();
  }
}

}  // namespace
}  // namespace ft::max_pool_test
