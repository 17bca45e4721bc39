// The fused optimizer step against LibTorch's own optimizers, on the CPU (ATen's fused kernels exist there
// too): the same parameters and state step after step, a device-side skip that leaves everything as it was,
// step counts that LibTorch continues from after a checkpoint, and rates read from tensors.
#include <gtest/gtest.h>
#include <torch/optim/adam.h>
#include <torch/optim/adamw.h>
#include <torch/optim/sgd.h>

#include "optim/fused_step.h"
#include "optim/optimizer.h"

namespace ft {
namespace {

struct Twin {
  std::vector<at::Tensor> fused_params, plain_params;
  std::unique_ptr<torch::optim::Optimizer> fused_optimizer, plain_optimizer;
  std::unique_ptr<FusedStep> fused;
};

// `split`: the parameters in two optimizer groups (the first two, then the third) instead of one.
Twin twin(OptimizerConfig config, bool split = false) {
  at::manual_seed(11);
  Twin t;
  for (auto shape : {std::vector<std::int64_t>{8, 4}, {4}, {3, 2, 2}}) {
    const auto p = at::randn(shape);
    t.fused_params.push_back(p.clone().requires_grad_(true));
    t.plain_params.push_back(p.clone().requires_grad_(true));
  }
  const auto groups_of = [split](const std::vector<at::Tensor>& p) {
    if (!split) return std::vector<ParameterGroup>{{p, {}}};
    return std::vector<ParameterGroup>{{{p[0], p[1]}, {}}, {{p[2]}, {}}};
  };
  t.fused_optimizer = make_optimizer(config, groups_of(t.fused_params));
  t.plain_optimizer = make_optimizer(config, groups_of(t.plain_params));
  config.implementation = OptimizerImplementation::fused;
  t.fused = FusedStep::make(*t.fused_optimizer, config, at::kCPU);
  return t;
}

// Gives both twins the same random gradients.
void same_gradients(Twin& t) {
  for (std::size_t i = 0; i < t.fused_params.size(); ++i) {
    const auto g = at::randn_like(t.fused_params[i]);
    t.fused_params[i].mutable_grad() = g.clone();
    t.plain_params[i].mutable_grad() = g.clone();
  }
}

void expect_same(const Twin& t, const std::string& when) {
  for (std::size_t i = 0; i < t.fused_params.size(); ++i)
    EXPECT_TRUE(at::allclose(t.fused_params[i], t.plain_params[i], 1e-5, 1e-6))
        << when << ": parameter " << i << " differs by " << (t.fused_params[i] - t.plain_params[i]).abs().max().item<double>();
}

OptimizerConfig config_of(OptimizerName name) {
  OptimizerConfig c;
  c.name = name;
  c.lr = 0.05;
  c.momentum = 0.9;
  c.nesterov = name == OptimizerName::sgd;
  c.weight_decay = 0.01;
  return c;
}

class FusedStepEquals : public ::testing::TestWithParam<OptimizerName> {};

TEST_P(FusedStepEquals, LibTorchsStepAfterStep) {
  Twin t = twin(config_of(GetParam()));
  ASSERT_TRUE(t.fused);
  for (int step = 1; step <= 5; ++step) {
    same_gradients(t);
    t.fused->step();
    t.plain_optimizer->step();
    expect_same(t, "step " + std::to_string(step));
  }
}

// A skip decided on the device leaves parameters, momentum and Adam's averages and step counts as they
// were; the next step then matches a LibTorch optimizer that never saw the skipped one.
TEST_P(FusedStepEquals, ASkippedStepChangesNothing) {
  Twin t = twin(config_of(GetParam()));
  same_gradients(t);
  t.fused->step();
  t.plain_optimizer->step();
  const auto before = t.fused_params[0].clone();
  for (auto& p : t.fused_params) p.mutable_grad() = at::full_like(p, 1e30);
  t.fused->step(at::ones({1}));
  EXPECT_TRUE(at::equal(t.fused_params[0], before)) << "a skipped step moved a parameter";
  same_gradients(t);
  t.fused->step(at::zeros({1}));
  t.plain_optimizer->step();
  expect_same(t, "after a skipped step");
}

// Checkpoints save LibTorch's state: after store_step_counts a LibTorch optimizer built from that state
// continues exactly where the fused steps left off.
TEST_P(FusedStepEquals, LibTorchContinuesFromTheStoredCounts) {
  Twin t = twin(config_of(GetParam()));
  for (int step = 0; step < 3; ++step) {
    same_gradients(t);
    t.fused->step();
    t.plain_optimizer->step();
  }
  t.fused->store_step_counts();
  same_gradients(t);
  t.fused_optimizer->step();  // LibTorch's own loop on the fused run's state
  t.plain_optimizer->step();
  expect_same(t, "LibTorch after fused steps");
}

// Rates read from tensors (as a captured step reads them) follow the schedule: each step's rate is set on
// the groups (each its own), loaded into the tensors, and the step equals LibTorch's at those rates.
TEST_P(FusedStepEquals, DeviceRatesFollowTheSchedule) {
  Twin t = twin(config_of(GetParam()), /*split=*/true);
  ASSERT_EQ(t.fused_optimizer->param_groups().size(), 2u);
  t.fused->use_device_rates();
  for (int step = 1; step <= 4; ++step) {
    const double lr = 0.05 / step;
    for (auto* optimizer : {t.fused_optimizer.get(), t.plain_optimizer.get()})
      for (std::size_t g = 0; g < optimizer->param_groups().size(); ++g)
        optimizer->param_groups()[g].options().set_lr(lr * static_cast<double>(3 * g + 1));
    t.fused->load_rates();
    same_gradients(t);
    t.fused->step();
    t.plain_optimizer->step();
    expect_same(t, "step " + std::to_string(step) + " at lr " + std::to_string(lr));
  }
}

INSTANTIATE_TEST_SUITE_P(Optimizers, FusedStepEquals,
                         ::testing::Values(OptimizerName::sgd, OptimizerName::adam, OptimizerName::adamw),
                         [](const auto& info) { return std::string(choice_name(info.param)); });

TEST(FusedStep, ChosenOnCudaByDefaultAndRefusedForRmsprop) {
  OptimizerConfig c = config_of(OptimizerName::sgd);
  auto optimizer = make_optimizer(c, std::vector<at::Tensor>{at::zeros({2}).requires_grad_(true)});
  EXPECT_FALSE(FusedStep::make(*optimizer, c, at::kCPU)) << "auto fused a CPU run (its trajectory would move)";
  c.implementation = OptimizerImplementation::per_tensor;
  EXPECT_FALSE(FusedStep::make(*optimizer, c, at::Device(at::kCUDA, 0)));
  c.implementation = OptimizerImplementation::automatic;
  EXPECT_TRUE(FusedStep::make(*optimizer, c, at::Device(at::kCUDA, 0)));
  c.name = OptimizerName::rmsprop;
  EXPECT_FALSE(FusedStep::make(*optimizer, c, at::Device(at::kCUDA, 0)));
  c.implementation = OptimizerImplementation::fused;
  EXPECT_THROW(FusedStep::make(*optimizer, c, at::kCPU), Error);
}

}  // namespace
}  // namespace ft
