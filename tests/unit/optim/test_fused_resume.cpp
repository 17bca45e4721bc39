// Optimizer state across a checkpoint written by the fused step and resumed by LibTorch's optimizer (Muon's own
// per-tensor step for muon), and back: the run goes on as that optimizer stepping the same gradients from the
// start, with no checkpoint.
#include <gtest/gtest.h>
#include <torch/optim/adam.h>
#include <torch/optim/adamw.h>
#include <torch/optim/sgd.h>

#include "checkpoint/checkpoint.h"
#include "config/fingerprint.h"
#include "models/network.h"
#include "optim/fused_step.h"
#include "optim/optimizer.h"
#include "optim/precision.h"
#include "test_paths.h"

namespace ft::fused_resume_test {
namespace {

// optimizer.implementation auto: a GPU run's fused steps resumed on a CPU, a CPU run resumed on a GPU. The
// reference never touches FusedStep or the checkpoint code.

constexpr int kSteps = 6;       // optimizer steps of the whole run
constexpr int kCheckpoint = 3;  // the steps before the checkpoint

struct Replica {
  std::shared_ptr<Network> net;
  std::unique_ptr<torch::optim::Optimizer> optimizer;
  std::unique_ptr<FusedStep> fused;  // null: LibTorch's own step
};

Config config_of(OptimizerName name) {
  Config c;
  c.model.name = ModelName::conv_stack;
  LayerSpec conv, linear;
  conv.type = LayerType::conv;
  conv.out = 4;
  conv.kernel = 3;
  linear.type = LayerType::linear;
  c.model.layers = {conv, linear};
  c.optimizer.name = name;
  c.optimizer.lr = name == OptimizerName::sgd || name == OptimizerName::muon ? 0.05 : 0.01;
  c.optimizer.momentum = 0.9;
  c.optimizer.nesterov = name == OptimizerName::sgd || name == OptimizerName::muon;
  c.optimizer.weight_decay = 0.01;
  return c;
}

// `init_seed` sets the initial weights: a resumed replica starts from other weights, which the checkpoint
// must replace. float64, so that the fused kernels and LibTorch's loop round alike to far below the bound.
Replica replica(const Config& c, bool fused, std::uint64_t init_seed) {
  at::manual_seed(init_seed);
  Replica r;
  r.net = make_network(c.model, InputShape{1, 8, 8, 3});
  r.net->to(at::kDouble);
  std::vector<std::pair<std::string, at::Tensor>> named;
  for (const auto& item : r.net->named_parameters()) named.emplace_back(item.key(), item.value());
  r.optimizer = make_optimizer(c.optimizer, group_parameters(named, {}, c.optimizer));  // muon: filters apart
  OptimizerConfig o = c.optimizer;
  o.implementation = fused ? OptimizerImplementation::fused : OptimizerImplementation::per_tensor;
  r.fused = FusedStep::make(*r.optimizer, o, at::kCPU);
  EXPECT_EQ(static_cast<bool>(r.fused), fused);
  return r;
}

// Step `step`'s gradients: the same for every replica, whatever happened before.
void step(Replica& r, int step) {
  at::manual_seed(1000 + step);
  for (auto& p : r.net->parameters()) p.mutable_grad() = at::randn_like(p);
  if (r.fused)
    r.fused->step();
  else
    r.optimizer->step();
}

void expect_same_weights(const Replica& got, const Replica& want, const std::string& when) {
  const auto a = got.net->parameters(), b = want.net->parameters();
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    const double scale = b[i].abs().max().item<double>();
    const double off = (a[i] - b[i]).abs().max().item<double>();
    EXPECT_LE(off, 1e-12 * std::max(1.0, scale)) << when << ": parameter " << i << " is off by " << off;
  }
}

// The checkpoint the first replica writes after kCheckpoint steps, loaded into a fresh replica of the other
// (or the same) implementation, which takes the remaining steps.
Replica resumed(const Config& c, bool fused_before, bool fused_after, const std::string& name) {
  Replica before = replica(c, fused_before, 3);
  for (int s = 1; s <= kCheckpoint; ++s) step(before, s);
  if (before.fused) before.fused->store_step_counts();  // what the trainer does before every save
  const std::string path = ft::test::temp_dir() + "/fused-resume-" + name + ".ckpt";
  LossScaler scaler(false, 1.0, 100, at::kCPU);
  TrainingPosition position;
  position.global_step = kCheckpoint;
  save_checkpoint(path, run_fingerprint(c), *before.net, *before.optimizer, scaler, position, at::kCPU);

  Replica after = replica(c, fused_after, 77);
  LossScaler loaded_scaler(false, 1.0, 100, at::kCPU);
  load_checkpoint(path, run_fingerprint(c), *after.net, *after.optimizer, loaded_scaler, at::kCPU);
  return after;
}

class FusedResume : public ::testing::TestWithParam<OptimizerName> {
 protected:
  // The reference: LibTorch's optimizer through all the steps; `after` takes steps kCheckpoint + 1 on.
  void expect_continues_like_libtorch(Replica after) {
    Replica reference = replica(config_of(GetParam()), false, 3);
    for (int s = 1; s <= kCheckpoint; ++s) step(reference, s);
    expect_same_weights(after, reference, "just resumed");
    for (int s = kCheckpoint + 1; s <= kSteps; ++s) {
      step(reference, s);
      step(after, s);
      expect_same_weights(after, reference, "step " + std::to_string(s));
    }
  }
  std::string name(const char* what) const { return std::string(what) + "-" + choice_name(GetParam()); }
};

TEST_P(FusedResume, FusedStepsResumedByLibTorch) {
  expect_continues_like_libtorch(resumed(config_of(GetParam()), true, false, name("fused-to-libtorch")));
}

TEST_P(FusedResume, LibTorchStepsResumedFused) {
  expect_continues_like_libtorch(resumed(config_of(GetParam()), false, true, name("libtorch-to-fused")));
}

TEST_P(FusedResume, FusedStepsResumedFused) {
  expect_continues_like_libtorch(resumed(config_of(GetParam()), true, true, name("fused-to-fused")));
}

INSTANTIATE_TEST_SUITE_P(Optimizers, FusedResume,
                         ::testing::Values(OptimizerName::sgd, OptimizerName::adam, OptimizerName::adamw,
                                           OptimizerName::muon),
                         [](const auto& info) { return std::string(choice_name(info.param)); });

}  // namespace
}  // namespace ft::fused_resume_test
