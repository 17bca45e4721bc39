// Tests of precision.half_weights on the CPU: which tensors of the fast net become half and which stay float32,
// a bf16-weights training step under autocast, and the fused step on fp16 weights whose gradients keep the loss
// scale, against the same step on float32 copies.
#include <gtest/gtest.h>

#include <string>

#include "models/network.h"
#include "optim/fused_step.h"
#include "optim/muon.h"
#include "optim/optimizer.h"
#include "optim/precision.h"
#include "runtime/error.h"

namespace ft::half_weights_test {
namespace {

std::shared_ptr<Network> fast_net(std::uint64_t seed) {
  at::manual_seed(seed);
  ModelConfig config;
  config.name = ModelName::fast_cifar;
  config.width = 8;
  return make_network(config, {3, 16, 16, 10});
}

bool is_norm(const std::string& name) { return name.find(".norm") != std::string::npos; }

TEST(HalfWeights, ConvAndLinearWeightsTurnHalfBatchNormStaysFloat) {
  for (at::ScalarType type : {at::kHalf, at::kBFloat16}) {
    auto net = fast_net(1);
    use_half_weights(*net, type);
    for (const auto& item : net->named_parameters())
      EXPECT_EQ(item.value().scalar_type(), is_norm(item.key()) ? at::kFloat : type) << item.key();
    int buffers = 0;
    for (const auto& item : net->named_buffers()) {
      ++buffers;
      const bool count = item.key().find("num_batches_tracked") != std::string::npos;
      EXPECT_EQ(item.value().scalar_type(), count ? at::kLong : at::kFloat) << item.key();
    }
    EXPECT_EQ(buffers, 6 * 3);  // six BatchNorms: mean, variance, count
  }
  auto net = fast_net(1);
  EXPECT_THROW(use_half_weights(*net, at::kFloat), Error);
}

// The values survive the conversion (rounded once) and the parameters stay the module's own tensors.
TEST(HalfWeights, TheSameTensorsRoundedOnce) {
  auto net = fast_net(2), reference = fast_net(2);
  const at::Tensor before = net->named_parameters()["group1.conv1.weight"];
  use_half_weights(*net, at::kHalf);
  const at::Tensor after = net->named_parameters()["group1.conv1.weight"];
  EXPECT_TRUE(after.is_same(before));
  EXPECT_TRUE(at::equal(after, reference->named_parameters()["group1.conv1.weight"].to(at::kHalf)));
}

// bf16 weights train on the CPU: under bf16 autocast every gradient is finite and in its parameter's type.
TEST(HalfWeights, Bf16WeightsTrainAStepUnderAutocast) {
  auto net = fast_net(3);
  use_half_weights(*net, at::kBFloat16);
  net->train();
  at::Tensor loss;
  {
    AutocastScope autocast(at::kCPU, at::kBFloat16);
    loss = at::cross_entropy_loss(net->forward(at::randn({4, 3, 16, 16})).to(at::kFloat), at::tensor({0, 1, 2, 3}, at::kLong));
  }
  loss.backward();
  for (const auto& item : net->named_parameters()) {
    if (!item.value().requires_grad()) continue;
    ASSERT_TRUE(item.value().grad().defined()) << item.key();
    EXPECT_EQ(item.value().grad().scalar_type(), item.value().scalar_type()) << item.key();
    EXPECT_TRUE(item.value().grad().isfinite().all().item<bool>()) << item.key();
  }
}

// fp16 weights, gradients x 1024 kept scaled: Muon divides the scale out in float32 and lands where the same
// steps on float32 copies with the true gradients land, within fp16's rounding. (The SGD groups' ATen kernel
// takes the scale on CUDA only: MuonCuda.* in the GPU suite.)
TEST(HalfWeights, MuonOnScaledFp16GradientsMatchesFloat32) {
  at::manual_seed(4);
  std::vector<at::Tensor> half, single, start, half_buffers, single_buffers;
  for (const auto& shape : std::vector<std::vector<std::int64_t>>{{4, 3, 3, 3}, {4, 3, 3, 3}, {8, 2, 1, 1}}) {
    const at::Tensor init = at::randn(shape).to(at::kHalf);
    half.push_back(init.clone()), single.push_back(init.to(at::kFloat)), start.push_back(init.to(at::kFloat));
    half_buffers.push_back(at::zeros_like(init)), single_buffers.push_back(at::zeros_like(single.back()));
  }
  MuonStep s;
  s.lr = at::scalar_tensor(0.2, at::kDouble);
  s.momentum = 0.6, s.nesterov = true;
  s.ns.dtype = at::kFloat;
  MuonStep scaled = s;
  scaled.grad_scale = at::full({1}, 1024.0f);
  for (int step = 0; step < 3; ++step) {
    std::vector<at::Tensor> half_grads, single_grads;
    for (const auto& p : single) {
      const at::Tensor g = (at::randn_like(p) * 0.05).to(at::kHalf);
      half_grads.push_back((g.to(at::kFloat) * 1024).to(at::kHalf)), single_grads.push_back(g.to(at::kFloat));
    }
    muon_update(half, half_grads, half_buffers, scaled);
    muon_update(single, single_grads, single_buffers, s);
  }
  for (std::size_t i = 0; i < half.size(); ++i) {
    EXPECT_EQ(half[i].scalar_type(), at::kHalf);
    const double off = (half[i].to(at::kFloat) - single[i]).abs().max().item<double>();
    EXPECT_LT(off, 1e-2) << "parameter " << i;
    EXPECT_GT((single[i] - start[i]).abs().max().item<double>(), 0.1) << "parameter " << i << " hardly moved";
  }
}

// ATen's fused CPU kernels (torch 2.11) leave the vectorised part of a float16/bfloat16 parameter unchanged: the
// fused step refuses half parameters on the CPU rather than train them wrongly; on CUDA it takes them.
TEST(HalfWeights, TheFusedStepRefusesHalfParametersOnTheCpu) {
  OptimizerConfig c;
  c.momentum = 0.9;
  c.implementation = OptimizerImplementation::fused;
  for (at::ScalarType type : {at::kHalf, at::kBFloat16}) {
    auto optimizer = make_optimizer(c, std::vector<at::Tensor>{at::zeros({20}, type).requires_grad_(true)});
    EXPECT_THROW(FusedStep::make(*optimizer, c, at::kCPU), Error) << type;
    EXPECT_TRUE(FusedStep::make(*optimizer, c, at::Device(at::kCUDA, 0))) << type;
  }
  auto single = make_optimizer(c, std::vector<at::Tensor>{at::zeros({20}).requires_grad_(true)});
  EXPECT_TRUE(FusedStep::make(*single, c, at::kCPU));
}

}  // namespace
}  // namespace ft::half_weights_test
