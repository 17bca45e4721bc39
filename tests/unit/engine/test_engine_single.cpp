// The gradient engine in a one-rank world: averaged gradients land in .grad unchanged (1/1 scaling),
// accumulation over micro-batches sums gradients, and a parameter unused everywhere is tolerated.
#include <gtest/gtest.h>
#include <torch/csrc/autograd/autograd.h>
#include <torch/nn/modules/conv.h>
#include <torch/nn/modules/linear.h>

#include "comm/backend.h"
#include "engine/engine.h"
#include "test_world.h"

namespace ft {
namespace {

struct TwoLayers {
  torch::nn::Linear a{8, 16}, b{16, 4};
  std::vector<NamedTensor> named() {
    std::vector<NamedTensor> out;
    for (auto& p : a->named_parameters()) out.push_back({"a." + p.key(), p.value()});
    for (auto& p : b->named_parameters()) out.push_back({"b." + p.key(), p.value()});
    return out;
  }
  at::Tensor loss(const at::Tensor& x) { return b(a(x).relu()).pow(2).sum(); }
};

// The machinery itself (buckets, packing, the backend) even in this one-rank world.
GradientEngineOptions small_buckets(bool in_place = true) {
  GradientEngineOptions options;
  options.reduce_alone = true;
  options.in_place = in_place;
  options.first_bucket_mib = 16.0 * 4 / (1 << 20);
  options.bucket_mib = 100.0 * 4 / (1 << 20);
  return options;
}

class GradientEngineModes : public ::testing::TestWithParam<bool> {};

TEST_P(GradientEngineModes, SingleRankGradientsMatchAutograd) {
  auto& world = test::world();
  auto backend = make_backend(world, BackendOptions{});
  at::manual_seed(1);
  TwoLayers net;
  auto named = net.named();
  GradientEngine engine(*backend, world, named, small_buckets(GetParam()));
  EXPECT_EQ(engine.in_place(), GetParam());
  EXPECT_GE(engine.buckets().size(), 2u);

  const auto x = at::randn({5, 8});
  std::vector<at::Tensor> params;
  for (auto& n : named) params.push_back(n.tensor);
  const auto expected = torch::autograd::grad({net.loss(x)}, params);

  engine.prepare(true);
  net.loss(x).backward();
  engine.finish();
  for (std::size_t i = 0; i < params.size(); ++i)
    EXPECT_TRUE(at::allclose(params[i].grad(), expected[i], 1e-6, 1e-6)) << named[i].name;
}

TEST_P(GradientEngineModes, AccumulationSumsMicroBatches) {
  auto& world = test::world();
  auto backend = make_backend(world, BackendOptions{});
  at::manual_seed(2);
  TwoLayers net;
  auto named = net.named();
  GradientEngine engine(*backend, world, named, small_buckets(GetParam()));
  std::vector<at::Tensor> params;
  for (auto& n : named) params.push_back(n.tensor);
  const auto x1 = at::randn({3, 8}), x2 = at::randn({4, 8});
  const auto g1 = torch::autograd::grad({net.loss(x1)}, params);
  const auto g2 = torch::autograd::grad({net.loss(x2)}, params);

  engine.prepare(false);
  net.loss(x1).backward();
  engine.prepare(true);
  net.loss(x2).backward();
  engine.finish();
  for (std::size_t i = 0; i < params.size(); ++i)
    EXPECT_TRUE(at::allclose(params[i].grad(), g1[i] + g2[i], 1e-5, 1e-6)) << named[i].name;
  EXPECT_EQ(engine.stats().buckets, static_cast<std::int64_t>(engine.buckets().size()));
  EXPECT_GT(engine.stats().allreduce_s, 0.0) << "on the CPU the host clock times each bucket's all-reduce";
}

// A last bucket split into tensors of unequal sizes: 4-byte elements, first bucket 64 B (b.bias), then one
// of 832 B (b.weight 256 B, a.bias 64 B, a.weight 512 B) over the 600 B last-bucket limit, whose tail
// a.bias + a.weight (576 B) travels alone. Each gradient must come back from its own place in the buffer.
TEST_P(GradientEngineModes, SplitLastBucketReturnsEachGradientFromItsOwnSlot) {
  auto& world = test::world();
  auto backend = make_backend(world, BackendOptions{});
  at::manual_seed(4);
  TwoLayers net;
  auto named = net.named();
  GradientEngineOptions options = small_buckets(GetParam());
  options.bucket_mib = 1000.0 * 4 / (1 << 20);
  options.last_bucket_mib = 150.0 * 4 / (1 << 20);
  GradientEngine engine(*backend, world, named, options);
  ASSERT_EQ(engine.buckets().size(), 3u) << "the last bucket was not split";
  EXPECT_EQ(engine.buckets()[1].tensors, (std::vector<std::size_t>{2}));     // b.weight
  EXPECT_EQ(engine.buckets()[2].tensors, (std::vector<std::size_t>{1, 0}));  // a.bias, a.weight
  EXPECT_EQ(engine.buckets()[2].offsets, (std::vector<std::int64_t>{0, 16}));

  std::vector<at::Tensor> params;
  for (auto& n : named) params.push_back(n.tensor);
  const auto x = at::randn({5, 8});
  const auto expected = torch::autograd::grad({net.loss(x)}, params);
  for (int step = 0; step < 2; ++step) {  // the second step re-uses the buffers
    engine.clear_gradients();
    engine.prepare(true);
    net.loss(x).backward();
    engine.finish();
    for (std::size_t i = 0; i < params.size(); ++i) {
      ASSERT_TRUE(params[i].grad().defined()) << named[i].name << " step " << step;
      EXPECT_TRUE(at::allclose(params[i].grad(), expected[i], 1e-6, 1e-6))
          << named[i].name << " step " << step << ": gradient taken from the wrong place in its bucket";
    }
  }
}

INSTANTIATE_TEST_SUITE_P(InPlaceAndPacked, GradientEngineModes, ::testing::Bool(),
                         [](const auto& info) { return info.param ? "InPlace" : "Packed"; });

// Gradients sent as `wire` come back in fp32, within `rtol` of the exact ones and exactly representable in
// the wire type (they were rounded through it).
void expect_gradients_through_wire(at::ScalarType wire, double rtol) {
  auto& world = test::world();
  auto backend = make_backend(world, BackendOptions{});
  at::manual_seed(3);
  TwoLayers net;
  auto named = net.named();
  auto options = small_buckets();
  options.wire = wire;
  GradientEngine engine(*backend, world, named, options);
  std::vector<at::Tensor> params;
  for (auto& n : named) params.push_back(n.tensor);
  const auto x = at::randn({6, 8});
  const auto expected = torch::autograd::grad({net.loss(x)}, params);
  engine.prepare(true);
  net.loss(x).backward();
  engine.finish();
  for (std::size_t i = 0; i < params.size(); ++i) {
    const auto& g = params[i].grad();
    EXPECT_EQ(g.scalar_type(), at::kFloat) << "gradients return to the parameters' dtype";
    EXPECT_TRUE(at::allclose(g, expected[i], rtol, 1e-4)) << named[i].name;
    EXPECT_TRUE(at::equal(g, g.to(wire).to(at::kFloat))) << named[i].name;
  }
  EXPECT_EQ(engine.stats().bytes % 2, 0);
}

TEST(GradientEngine, Fp16WireKeepsGradientsWithinHalfPrecision) { expect_gradients_through_wire(at::kHalf, 2e-3); }

// bf16 keeps 8 significant bits: a relative error up to 2^-8 per value.
TEST(GradientEngine, Bf16WireKeepsGradientsWithinBfloat16Precision) {
  expect_gradients_through_wire(at::kBFloat16, 8e-3);
}

TEST(GradientEngine, OnlyHalfWidthWireTypesAreAccepted) {
  auto& world = test::world();
  auto backend = make_backend(world, BackendOptions{});
  TwoLayers net;
  auto options = small_buckets();
  options.wire = at::kDouble;
  EXPECT_THROW(GradientEngine(*backend, world, net.named(), options), Error);
}

TEST(GradientEngine, ParameterUnusedOnEveryRankIsLeftWithoutGradient) {
  auto& world = test::world();
  auto backend = make_backend(world, BackendOptions{});
  TwoLayers net;
  auto named = net.named();
  auto unused = at::zeros({3}).requires_grad_(true);
  named.push_back({"unused", unused});
  GradientEngine engine(*backend, world, named, small_buckets());
  engine.prepare(true);
  net.loss(at::randn({2, 8})).backward();
  EXPECT_NO_THROW(engine.finish());
  EXPECT_FALSE(unused.grad().defined());
  EXPECT_TRUE(named[0].tensor.grad().defined());
}

// One rank reduces nothing: by default the engine leaves autograd's gradients as they are, the very
// tensors autograd wrote (no packing copy, no collective, no compression rounding), micro-batches summed.
TEST(GradientEngine, OneRankLeavesAutogradsGradientsAlone) {
  auto& world = test::world();
  auto backend = make_backend(world, BackendOptions{});
  at::manual_seed(4);
  TwoLayers net;
  auto named = net.named();
  GradientEngineOptions options;
  options.wire = at::kHalf;
  GradientEngine engine(*backend, world, named, options);
  ASSERT_TRUE(engine.solo());
  std::vector<at::Tensor> params;
  for (auto& n : named) params.push_back(n.tensor);
  const auto x = at::randn({5, 8}), y = at::randn({3, 8});
  const auto first = torch::autograd::grad({net.loss(x)}, params);
  const auto second = torch::autograd::grad({net.loss(y)}, params);
  engine.clear_gradients();
  engine.prepare(false);
  net.loss(x).backward();
  std::vector<const void*> written;
  for (auto& p : params) written.push_back(p.grad().data_ptr());
  engine.prepare(true);
  net.loss(y).backward();
  engine.finish();
  for (std::size_t i = 0; i < params.size(); ++i) {
    EXPECT_EQ(params[i].grad().data_ptr(), written[i]) << named[i].name << ": the gradient was moved or copied";
    EXPECT_TRUE(at::allclose(params[i].grad(), first[i] + second[i], 1e-6, 1e-6)) << named[i].name;
  }
  EXPECT_EQ(engine.stats().buckets, 0);
  EXPECT_EQ(engine.stats().bytes, 0);
}

// Packed buckets keep a channels_last weight's layout: its gradient comes back in the parameter's strides,
// as a view into the fusion buffer (no NCHW copy on the way in, none for the optimizer on the way out).
TEST(GradientEngine, PackedChannelsLastGradientsKeepTheirLayout) {
  auto& world = test::world();
  auto backend = make_backend(world, BackendOptions{});
  at::manual_seed(5);
  torch::nn::Conv2d conv(torch::nn::Conv2dOptions(3, 8, 3));
  conv->weight.set_data(conv->weight.contiguous(at::MemoryFormat::ChannelsLast));
  std::vector<NamedTensor> named = {{"conv.weight", conv->weight}, {"conv.bias", conv->bias}};
  const auto x = at::randn({2, 3, 6, 6}).contiguous(at::MemoryFormat::ChannelsLast);
  const auto expected = torch::autograd::grad({conv(x).pow(2).sum()}, {conv->weight, conv->bias});
  GradientEngine engine(*backend, world, named, small_buckets(/*in_place=*/false));
  ASSERT_FALSE(engine.in_place());
  engine.prepare(true);
  conv(x).pow(2).sum().backward();
  engine.finish();
  const at::Tensor& g = conv->weight.grad();
  EXPECT_EQ(g.strides(), conv->weight.strides()) << "the gradient lost the weight's channels_last layout";
  EXPECT_TRUE(at::allclose(g, expected[0], 1e-5, 1e-5));
  EXPECT_TRUE(at::allclose(conv->bias.grad(), expected[1], 1e-5, 1e-5));
  // A view into a fusion buffer: its storage holds more than the weight's own elements.
  EXPECT_GT(g.storage().nbytes(), static_cast<std::size_t>(g.numel()) * g.element_size());
}

}  // namespace
}  // namespace ft
