// The gradient engine on real ranks in both of its modes: gradients reduced where autograd left them
// (in place) and packed into fusion buffers give the mean of every rank's gradients, for each host backend.
#include <gtest/gtest.h>
#include <torch/csrc/autograd/autograd.h>
#include <torch/nn/modules/conv.h>
#include <torch/nn/modules/linear.h>

#include "comm/backend.h"
#include "engine/engine.h"
#include "train_fixture.h"

namespace ft::test {
namespace {

// Tensors of very different sizes (a 200k-element weight spans several ring segments, biases are
// staged small spans), so buckets mix both kinds.
struct Net {
  torch::nn::Conv2d conv{torch::nn::Conv2dOptions(3, 8, 3)};
  torch::nn::Linear wide{512, 400}, head{400, 5};
  std::vector<NamedTensor> named() {
    std::vector<NamedTensor> out;
    for (auto& p : conv->named_parameters()) out.push_back({"conv." + p.key(), p.value()});
    for (auto& p : wide->named_parameters()) out.push_back({"wide." + p.key(), p.value()});
    for (auto& p : head->named_parameters()) out.push_back({"head." + p.key(), p.value()});
    return out;
  }
  at::Tensor loss(const at::Tensor& images) {
    auto x = conv(images).relu();                      // [n, 8, 8, 8]
    return head(wide(x.flatten(1)).tanh()).pow(2).sum();
  }
};

at::Tensor images_of(int rank) {
  at::manual_seed(100 + rank);
  return at::randn({4, 3, 10, 10});
}

void expect_mean_gradients(const std::string& backend_name, bool in_place) {
  const World& world = ft::test::world();
  BackendOptions options;
  options.name = choice_from<BackendName>("backend", backend_name);
  options.stall_timeout_s = 20;
  auto backend = make_backend(world, options);
  at::manual_seed(7);
  Net net;
  auto named = net.named();
  std::vector<at::Tensor> params;
  for (auto& n : named) params.push_back(n.tensor);

  std::vector<at::Tensor> expected;
  for (int r = 0; r < world.size(); ++r) {
    const auto grads = torch::autograd::grad({net.loss(images_of(r))}, params);
    if (expected.empty()) expected.assign(grads.begin(), grads.end());
    else for (std::size_t i = 0; i < grads.size(); ++i) expected[i] = expected[i] + grads[i];
  }
  for (auto& e : expected) e = e / world.size();

  GradientEngineOptions engine_options;
  engine_options.in_place = in_place;
  engine_options.first_bucket_mib = 0.01;
  engine_options.bucket_mib = 0.5;
  GradientEngine engine(*backend, world, named, engine_options);
  EXPECT_EQ(engine.in_place(), in_place);
  EXPECT_GE(engine.buckets().size(), 3u);
  for (int step = 0; step < 3; ++step) {  // later steps reuse buckets and hooks
    engine.clear_gradients();
    engine.prepare(true);
    net.loss(images_of(world.rank())).backward();
    engine.finish();
    for (std::size_t i = 0; i < params.size(); ++i)
      EXPECT_TRUE(at::allclose(params[i].grad(), expected[i], 1e-5, 1e-6))
          << backend_name << (in_place ? " in place" : " packed") << ", step " << step << ": " << named[i].name;
  }
  // In place each gradient keeps its own storage; packed ones are views of a shared bucket.
  const bool shared = params[0].grad().storage().data() == params[1].grad().storage().data();
  EXPECT_EQ(shared, !in_place);
}

TEST(EngineModes, MpiInPlaceAndPackedGiveTheMean) {
  expect_mean_gradients("mpi", true);
  expect_mean_gradients("mpi", false);
}

#ifdef FUSETRAIN_WITH_GLOO
TEST(EngineModes, GlooInPlaceAndPackedGiveTheMean) {
  expect_mean_gradients("gloo", true);
  expect_mean_gradients("gloo", false);
}
#endif

}  // namespace
}  // namespace ft::test
