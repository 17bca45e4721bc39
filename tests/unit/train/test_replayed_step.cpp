// The CUDA-graph step's own logic on the CPU, through the recording seam: a stand-in that runs the captured
// work again on each replay makes a train.cuda_graphs run replay its steps as a graph would, so its weights,
// losses and graph counts can be held against the eager run of the same config.
#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <string>

#include "comm/backend.h"
#include "data_prep/prep_pipeline.h"
#include "io/paths.h"
#include "test_paths.h"
#include "replaying_recording.h"
#include "test_world.h"
#include "train_configs.h"
#include "device/device_setup.h"
#include "device/graphed_step.h"
#include "train/trainer.h"

namespace ft {
namespace {

std::string small_fashion() {
  const std::string out = ft::test::temp_dir() + "/fashion-replayed-step";
  if (paths::exists(out + "/test-00000-of-00001.h5")) return out;
  prep::PrepOptions options;
  options.format = prep::Format::idx;
  options.input = ft::test::fashion_mnist_dir();
  options.output = out;
  options.shards = 1;
  options.limit = 640;
  prep::run_prep(options);
  return out;
}

TEST(ReplayedStep, ReplaysTheEagerRunWithItsSchedule) {
  if (!paths::exists(ft::test::fashion_mnist_dir() + "/train-images-idx3-ubyte.gz"))
    GTEST_SKIP() << "Fashion-MNIST not installed (apt-get install dataset-fashion-mnist)";
  auto& world = test::world();
  Config c = test::graphable_adam(small_fashion());
  auto backend = make_backend(world, BackendOptions{});
  Trainer eager(c, world, *backend, place_rank(c, world));
  const auto eager_run = eager.run();

  c.train.cuda_graphs = true;
  TrainerOptions options;
  int recordings = 0;
  options.record_graphs = [&recordings] {
    ++recordings;
    return std::make_unique<test::ReplayingRecording>();
  };
  Trainer graphed(c, world, *backend, place_rank(c, world), options);
  const auto graphed_run = graphed.run();

  // 640 images at 64 a step: 10 steps an epoch, 20 in all, the first GraphedStep::kWarmupSteps eager.
  ASSERT_EQ(graphed_run.summary.optimizer_steps, 20);
  EXPECT_EQ(recordings, 1);
  EXPECT_EQ(graphed_run.summary.graph_captures, 1);
  EXPECT_EQ(graphed_run.summary.graph_replays, 20 - GraphedStep::kWarmupSteps);
  EXPECT_EQ(eager_run.summary.graph_captures, 0);
  EXPECT_EQ(eager_run.summary.graph_replays, 0);
  ASSERT_EQ(graphed_run.epochs.size(), eager_run.epochs.size());
  for (std::size_t e = 0; e < eager_run.epochs.size(); ++e) {
    EXPECT_EQ(graphed_run.epochs[e].lr, eager_run.epochs[e].lr) << "epoch " << e + 1;
    EXPECT_EQ(graphed_run.epochs[e].train_loss, eager_run.epochs[e].train_loss) << "epoch " << e + 1;
    EXPECT_EQ(graphed_run.epochs[e].train_acc, eager_run.epochs[e].train_acc) << "epoch " << e + 1;
  }
  // Bit for bit, on any CPU: on the CPU the graphed run's fused Adam reads each rate from a float64 tensor
  // refilled before each replay, the very value the eager one takes as an argument. A rate left at the
  // capture's value (no warm-up, no decay) moves the weights by 1e-3 and more.
  const auto a = eager.network()->parameters(), b = graphed.network()->parameters();
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i) EXPECT_TRUE(at::equal(a[i], b[i])) << "parameter " << i;
}

}  // namespace
}  // namespace ft
