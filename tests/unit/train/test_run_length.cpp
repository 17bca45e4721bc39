// A run's length from train.epochs or train.max_steps, at the edges (exact multiples of an epoch, one step
// more, one step, airbench94's 476 steps), and a run cut short mid-epoch against the hand-worked plan.
#include <gtest/gtest.h>

#include <string>

#include "comm/backend.h"
#include "device/device_setup.h"
#include "io/paths.h"
#include "fashion_subset.h"
#include "test_world.h"
#include "train/run_length.h"
#include "train/trainer.h"

namespace ft {
namespace {

RunLength length_of(int epochs, std::int64_t max_steps, std::int64_t per_epoch) {
  TrainConfig t;
  t.epochs = epochs;
  t.max_steps = max_steps;
  return RunLength::of(t, per_epoch);
}

TEST(RunLength, EpochsWithoutMaxSteps) {
  const RunLength l = length_of(10, 0, 48);
  EXPECT_EQ(l.epochs, 10);
  EXPECT_EQ(l.total_steps, 480);
  for (int e = 1; e <= 10; ++e) EXPECT_EQ(l.steps_in(e), 48) << "epoch " << e;
  EXPECT_EQ(l.steps_in(11), 0);
}

TEST(RunLength, MaxStepsCutsTheLastEpochShort) {
  const RunLength airbench = length_of(10, 476, 48);  // 9 x 48 + 44
  EXPECT_EQ(airbench.epochs, 10);
  EXPECT_EQ(airbench.total_steps, 476);
  EXPECT_EQ(airbench.steps_in(9), 48);
  EXPECT_EQ(airbench.steps_in(10), 44);
  EXPECT_EQ(airbench.steps_in(11), 0);

  const RunLength exact = length_of(10, 96, 48);  // an exact multiple: two whole epochs, whatever train.epochs says
  EXPECT_EQ(exact.epochs, 2);
  EXPECT_EQ(exact.steps_in(2), 48);
  EXPECT_EQ(exact.steps_in(3), 0);

  const RunLength one_more = length_of(1, 97, 48);  // one step into a third epoch, past train.epochs
  EXPECT_EQ(one_more.epochs, 3);
  EXPECT_EQ(one_more.steps_in(3), 1);

  const RunLength one = length_of(10, 1, 48);
  EXPECT_EQ(one.epochs, 1);
  EXPECT_EQ(one.steps_in(1), 1);

  const RunLength short_of_one = length_of(10, 47, 48);
  EXPECT_EQ(short_of_one.epochs, 1);
  EXPECT_EQ(short_of_one.steps_in(1), 47);
}

std::string length_data() { return test::fashion_subset("fashion-run-length", 320); }

Config small_run(const std::string& data) {
  Config c;
  c.model.name = ModelName::simple_cnn;
  c.data.path = data;
  c.data.batch_size = 32;  // 320 images: 10 steps an epoch
  c.data.limit_test = 64;
  c.optimizer.lr = 0.05;
  c.optimizer.momentum = 0.9;
  c.scheduler.name = SchedulerName::linear;
  c.scheduler.pct_start = 0.25;
  c.scheduler.min_lr = 0.001;
  c.train.lookahead_every = 5;
  c.train.epochs = 2;
  c.train.seed = 6;
  c.train.device = DeviceChoice::cpu;
  c.train.threads = 1;  // one kernel schedule, and quick on a busy machine
  return c;
}

TrainOutcome train_length(const Config& c) {
  auto& world = test::world();
  auto backend = make_backend(world, BackendOptions{});
  Trainer trainer(c, world, *backend, place_rank(c, world));
  return trainer.run();
}

// 23 steps of 10 an epoch: epochs of 10, 10 and 3 steps, the last epoch evaluated and ending on the schedule's
// floor (the linear schedule's last step over a span of 23).
TEST(RunLength, TrainerStopsAfterMaxSteps) {
  if (!test::have_fashion_mnist())
    GTEST_SKIP() << "Fashion-MNIST not installed (apt-get install dataset-fashion-mnist)";
  Config c = small_run(length_data());
  c.train.max_steps = 23;
  const TrainOutcome cut = train_length(c);
  EXPECT_EQ(cut.summary.optimizer_steps, 23);
  ASSERT_EQ(cut.epochs.size(), 3u);
  EXPECT_TRUE(cut.epochs[2].evaluated);
  EXPECT_DOUBLE_EQ(cut.epochs[2].lr, 0.001);
  EXPECT_GT(cut.epochs[1].lr, 0.001);
  // The last epoch's throughput counts its 3 steps' 96 images, not a whole epoch's 320.
  EXPECT_NEAR(cut.epochs[2].images_per_s * cut.epochs[2].epoch_time_s, 96.0, 1e-6);
}

// max_steps equal to the epochs' steps is the run without it, bit for bit.
TEST(RunLength, MaxStepsOfWholeEpochsIsThePlainRun) {
  if (!test::have_fashion_mnist())
    GTEST_SKIP() << "Fashion-MNIST not installed (apt-get install dataset-fashion-mnist)";
  Config c = small_run(length_data());
  const TrainOutcome plain = train_length(c);
  c.train.max_steps = 20;
  c.train.epochs = 7;  // not used once max_steps is set
  const TrainOutcome same = train_length(c);
  ASSERT_EQ(same.epochs.size(), plain.epochs.size());
  for (std::size_t e = 0; e < plain.epochs.size(); ++e) {
    EXPECT_EQ(same.epochs[e].weights_digest, plain.epochs[e].weights_digest) << "epoch " << e + 1;
    EXPECT_EQ(same.epochs[e].train_loss, plain.epochs[e].train_loss) << "epoch " << e + 1;
    EXPECT_EQ(same.epochs[e].lr, plain.epochs[e].lr) << "epoch " << e + 1;
  }
}

}  // namespace
}  // namespace ft
