// The gradient engine in a one-rank world: averaged gradients land in .grad unchanged (1/1 scaling),
// accumulation over micro-batches sums gradients, and a parameter unused everywhere is tolerated.
#include <gtest/gtest.h>
#include <torch/csrc/autograd/autograd.h>
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

GradientEngineOptions small_buckets(bool in_place = true) {
  GradientEngineOptions options;
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
  GradientEngine engine(*backend, world, named, GradientEngineOptions{});
  engine.prepare(true);
  net.loss(at::randn({2, 8})).backward();
  EXPECT_NO_THROW(engine.finish());
  EXPECT_FALSE(unused.grad().defined());
  EXPECT_TRUE(named[0].tensor.grad().defined());
}

}  // namespace
}  // namespace ft
