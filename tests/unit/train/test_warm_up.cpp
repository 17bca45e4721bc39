// train.warmup_steps leaves no trace in a run's results: the same config with and without the warm-up must give
// the same weights and optimizer digests and the same per-epoch figures, bit for bit, for each kind of step
// (overlapped, reproducible, the graphed step replayed on the CPU) and for the fused and per-tensor optimizers.
#include <gtest/gtest.h>

#include <csignal>
#include <functional>
#include <memory>
#include <string>

#include "checkpoint/checkpoint_files.h"
#include "comm/backend.h"
#include "device/device_setup.h"
#include "device/graphed_step.h"
#include "io/paths.h"
#include "fashion_subset.h"
#include "replaying_recording.h"
#include "runtime/signals.h"
#include "test_paths.h"
#include "test_world.h"
#include "train_configs.h"
#include "train/trainer.h"

namespace ft {
namespace {

// 320 training images: 10 steps an epoch at batch 32.
std::string warm_up_data() { return test::fashion_subset("fashion-warm-up", 320); }

// The fast recipe in small (BatchNorm's running statistics, per-group rates, Nesterov SGD, lookahead), 10
// steps an epoch, one thread.
Config recipe(const std::string& data) {
  Config c;
  test::apply_small_fast_recipe(c);
  c.model.width = 8;
  c.data.path = data;
  c.data.batch_size = 32;
  c.data.limit_test = 64;
  c.train.tta = Tta::flip;
  c.train.epochs = 2;
  c.train.seed = 4;
  c.train.device = DeviceChoice::cpu;
  c.train.threads = 1;  // one kernel schedule, and quick on a busy machine
  return c;
}

// Dropout (the random streams) and fused Adam (its device step counts and state made as zeros).
Config dropout_adam(const std::string& data) {
  Config c = test::graphable_adam(data);
  c.model.dropout = 0.2;
  c.data.batch_size = 32;
  c.data.limit_test = 64;
  c.train.threads = 1;
  return c;
}

TrainOutcome train_warm(const Config& c, TrainerOptions options = {}) {
  auto& world = test::world();
  auto backend = make_backend(world, BackendOptions{});
  Trainer trainer(c, world, *backend, place_rank(c, world), std::move(options));
  return trainer.run();
}

// Every per-epoch figure and digest equal, bit for bit.
void expect_same_run(const TrainOutcome& with, const TrainOutcome& without) {
  ASSERT_EQ(with.epochs.size(), without.epochs.size());
  for (std::size_t e = 0; e < with.epochs.size(); ++e) {
    const EpochRecord &a = with.epochs[e], &b = without.epochs[e];
    EXPECT_EQ(a.weights_digest, b.weights_digest) << "epoch " << e + 1;
    EXPECT_EQ(a.optimizer_digest, b.optimizer_digest) << "epoch " << e + 1;
    EXPECT_EQ(a.train_loss, b.train_loss) << "epoch " << e + 1;
    EXPECT_EQ(a.train_acc, b.train_acc) << "epoch " << e + 1;
    EXPECT_EQ(a.test_loss, b.test_loss) << "epoch " << e + 1;
    EXPECT_EQ(a.test_acc, b.test_acc) << "epoch " << e + 1;
    EXPECT_EQ(a.lr, b.lr) << "epoch " << e + 1;
  }
  EXPECT_EQ(with.summary.optimizer_steps, without.summary.optimizer_steps);
  EXPECT_EQ(with.summary.skipped_steps, without.summary.skipped_steps);
}

// A warm-up of `steps` steps against none; both runs' own checks of their clocks.
void expect_warm_up_leaves_no_trace(Config c, int steps) {
  c.train.warmup_steps = 0;
  const TrainOutcome without = train_warm(c);
  c.train.warmup_steps = steps;
  const TrainOutcome with = train_warm(c);
  expect_same_run(with, without);
  EXPECT_EQ(with.summary.warmup_steps, steps);
  EXPECT_GT(with.summary.warmup_s, 0);
  EXPECT_EQ(without.summary.warmup_steps, 0);
  EXPECT_EQ(without.summary.warmup_s, 0);
}

TEST(WarmUp, OverlappedStepOfTheRecipeIsUnchanged) {
  if (!test::have_fashion_mnist()) GTEST_SKIP() << "Fashion-MNIST not installed (apt-get install dataset-fashion-mnist)";
  // 13 steps: past the end of the first epoch's order (10 steps), so the warm-up wraps round it.
  expect_warm_up_leaves_no_trace(recipe(warm_up_data()), 13);
}

TEST(WarmUp, FusedSgdOfTheRecipeIsUnchanged) {
  if (!test::have_fashion_mnist()) GTEST_SKIP() << "Fashion-MNIST not installed (apt-get install dataset-fashion-mnist)";
  Config c = recipe(warm_up_data());
  c.optimizer.implementation = OptimizerImplementation::fused;
  expect_warm_up_leaves_no_trace(c, 3);
}

// Both of Adam's implementations: LibTorch's own step counts in its state objects, the fused one on the device.
TEST(WarmUp, DropoutStreamsAndAdamAreUnchanged) {
  if (!test::have_fashion_mnist()) GTEST_SKIP() << "Fashion-MNIST not installed (apt-get install dataset-fashion-mnist)";
  Config c = dropout_adam(warm_up_data());
  expect_warm_up_leaves_no_trace(c, 4);
  c.optimizer.implementation = OptimizerImplementation::per_tensor;
  expect_warm_up_leaves_no_trace(c, 4);
}

TEST(WarmUp, ReproducibleStepIsUnchanged) {
  if (!test::have_fashion_mnist()) GTEST_SKIP() << "Fashion-MNIST not installed (apt-get install dataset-fashion-mnist)";
  Config c = recipe(warm_up_data());
  c.distributed.reproducible = true;
  c.data.shuffle = Shuffle::global;
  expect_warm_up_leaves_no_trace(c, 2);
}

// A resumed run starts with the checkpoint's momentum, not zeros: its warm-up must put that back. Stopped after
// its first step (SIGUSR1), the run resumes from the one checkpoint twice, without and with a warm-up.
TEST(WarmUp, AResumedRunsMomentumIsPutBack) {
  if (!test::have_fashion_mnist()) GTEST_SKIP() << "Fashion-MNIST not installed (apt-get install dataset-fashion-mnist)";
  Config c = recipe(warm_up_data());
  TrainerOptions options;
  options.checkpoint_path = ft::test::temp_dir() + "/warm-up-resumed.ckpt";
  remove_checkpoints(options.checkpoint_path);
  install_stop_handlers();
  std::raise(SIGUSR1);  // stop after the first optimizer step
  EXPECT_THROW(train_warm(c, options), Interrupted);
  clear_stop_request();
  c.train.warmup_steps = 0;
  const TrainOutcome without = train_warm(c, options);
  c.train.warmup_steps = 3;
  const TrainOutcome with = train_warm(c, options);
  remove_checkpoints(options.checkpoint_path);
  expect_same_run(with, without);
}

// The graphed step replayed on the CPU: 5 warm-up steps are its 3 eager ones, the capture and one replay, so
// the run replays every one of its steps from the graph captured before its clock started, and still ends
// bit for bit where the eager run without a warm-up does.
TEST(WarmUp, ReplayedStepCapturesBeforeTheClockAndIsUnchanged) {
  if (!test::have_fashion_mnist()) GTEST_SKIP() << "Fashion-MNIST not installed (apt-get install dataset-fashion-mnist)";
  Config c = dropout_adam(warm_up_data());
  c.model.dropout = 0;  // the graphable simple_cnn of test_replayed_step.cpp
  const TrainOutcome eager = train_warm(c);
  c.train.cuda_graphs = true;
  c.train.warmup_steps = 5;
  int recordings = 0;
  TrainerOptions options;
  options.record_graphs = [&recordings] {
    ++recordings;
    return std::make_unique<test::ReplayingRecording>();
  };
  const TrainOutcome graphed = train_warm(c, options);
  expect_same_run(graphed, eager);
  EXPECT_EQ(recordings, 1);
  EXPECT_EQ(graphed.summary.graph_captures, 1);
  EXPECT_EQ(graphed.summary.graph_replays, graphed.summary.optimizer_steps);  // 20: none of them eager
  EXPECT_EQ(graphed.summary.optimizer_steps, 20);
}

// The clocks a run records: one positive epoch time per epoch, their sum as the training time, and the cold
// clock (this test process's start to the last epoch's end) past the warm-up and the training together.
TEST(WarmUp, ClocksAddUp) {
  if (!test::have_fashion_mnist()) GTEST_SKIP() << "Fashion-MNIST not installed (apt-get install dataset-fashion-mnist)";
  Config c = recipe(warm_up_data());
  c.train.warmup_steps = 2;
  const TrainOutcome run = train_warm(c);
  double sum = 0;
  for (const auto& e : run.epochs) {
    EXPECT_GT(e.epoch_time_s, 0) << "epoch " << e.epoch;
    sum += e.epoch_time_s;
  }
  EXPECT_EQ(run.summary.train_steps_s, sum);
  EXPECT_LE(sum, run.summary.train_time_s);  // the epoch loop's clock also holds the evaluations
  EXPECT_GE(run.summary.cold_s, run.summary.warmup_s + sum);
}

}  // namespace
}  // namespace ft
