// The fp16 steps the loss scaler skips, as the run's summary counts them: a scale that overflows every gradient
// skips every step of the run (a count worked out from the data's size) and leaves the weights as they began.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "comm/backend.h"
#include "noise_shards.h"
#include "test_paths.h"
#include "test_world.h"
#include "train/trainer.h"

namespace ft::skipped_steps_test {
namespace {

const test::NoiseSet kSet{16, 8, 4, 1, 3, {0.45}, {0.3}};
constexpr int kBatch = 4, kEpochs = 2;
constexpr std::int64_t kSteps = kEpochs * (16 / kBatch);  // kSet's 16 training images

// A linear classifier trained with SGD in fp16 (autocast on the CPU: the loader keeps fp16 for CUDA, the step's
// arithmetic is the same), with the given loss scale and optimizer implementation.
Config fp16_config(const std::string& data, double initial_scale, OptimizerImplementation implementation) {
  Config c = test::linear_sgd(data);
  c.data.batch_size = kBatch;
  c.optimizer.lr = 0.1;
  c.optimizer.implementation = implementation;
  c.precision.dtype = Precision::fp16;
  c.precision.initial_scale = initial_scale;
  c.train.epochs = kEpochs;
  return c;
}

struct Trained {
  TrainOutcome outcome;
  std::vector<at::Tensor> weights;
};

Trained train(const Config& c) {
  auto& world = test::world();
  auto backend = make_backend(world, BackendOptions{});
  Trainer trainer(c, world, *backend, at::Device(at::kCPU));
  Trained run{trainer.run(), {}};
  for (const auto& p : trainer.network()->parameters()) run.weights.push_back(p.detach().clone());
  return run;
}

bool same_weights(const Trained& a, const Trained& b) {
  if (a.weights.size() != b.weights.size()) return false;
  for (std::size_t i = 0; i < a.weights.size(); ++i)
    if (!at::equal(a.weights[i], b.weights[i])) return false;
  return true;
}

class SkippedSteps : public ::testing::TestWithParam<OptimizerImplementation> {
 protected:
  std::string data() const {
    const std::string dir = ft::test::temp_dir() + "/skipped-steps-" + std::to_string(static_cast<int>(GetParam()));
    return test::noise_shards(kSet, dir).dir;
  }
};

// 2^100 halved once per skip stays above 2^90 over the run's steps: every fp16 gradient is infinite, so every
// step is skipped, and the weights are those of the same run at learning rate 0.
TEST_P(SkippedSteps, AScaleThatAlwaysOverflowsSkipsEveryStepAndCountsThem) {
  const Config c = fp16_config(data(), 0x1p100, GetParam());
  const Trained skipped = train(c);
  EXPECT_EQ(skipped.outcome.summary.skipped_steps, kSteps);
  Config still = c;
  still.optimizer.lr = 0;
  EXPECT_TRUE(same_weights(skipped, train(still))) << "a skipped step changed the weights";
}

// A scale of 1 overflows nothing: no step is skipped, and the weights move.
TEST_P(SkippedSteps, AScaleThatNeverOverflowsSkipsNone) {
  const Config c = fp16_config(data(), 1, GetParam());
  const Trained trained = train(c);
  EXPECT_EQ(trained.outcome.summary.skipped_steps, 0);
  Config still = c;
  still.optimizer.lr = 0;
  EXPECT_FALSE(same_weights(trained, train(still)));
}

INSTANTIATE_TEST_SUITE_P(Implementations, SkippedSteps,
                         ::testing::Values(OptimizerImplementation::fused, OptimizerImplementation::per_tensor),
                         [](const auto& info) {
                           return info.param == OptimizerImplementation::fused ? "fused" : "per_tensor";
                         });

}  // namespace
}  // namespace ft::skipped_steps_test
