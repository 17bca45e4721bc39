// A run stopped by a signal mid-epoch checkpoints and resumes to exactly the parameters and history of
// an uninterrupted run (CPU, same seed, dropout and augmentation on; also with lookahead).
#include <gtest/gtest.h>

#include <csignal>
#include <optional>
#include <random>
#include <string>

#include "io/paths.h"
#include "comm/backend.h"
#include "shard/shard_format.h"
#include "runtime/error.h"
#include "runtime/signals.h"
#include "test_world.h"
#include "checkpoint/checkpoint_files.h"
#include "train/trainer.h"
#include "test_paths.h"

namespace ft {
namespace {

// Each test writes its own folder: ctest runs the tests of this file as separate processes at once.
std::string tiny_shards() {
  const std::string dir =
      ft::test::temp_dir() + "/resume-data-" + ::testing::UnitTest::GetInstance()->current_test_info()->name();
  paths::remove_all(dir);
  paths::create_directories(dir);
  std::mt19937 rng(5);
  for (const char* split : {"train", "test"}) {
    const std::int64_t n = std::string(split) == "train" ? 96 : 32;
    std::vector<std::uint8_t> images(static_cast<std::size_t>(n * 12 * 12 * 3));
    std::vector<std::int32_t> labels(static_cast<std::size_t>(n));
    for (auto& v : images) v = static_cast<std::uint8_t>(rng() % 256);
    for (auto& l : labels) l = static_cast<std::int32_t>(rng() % 3);
    ShardMeta meta;
    meta.dataset = "noise";
    meta.split = split;
    meta.class_names = {"a", "b", "c"};
    meta.mean = {0.5, 0.5, 0.5};
    meta.std = {0.3, 0.3, 0.3};
    meta.count = n;
    meta.height = meta.width = 12;
    meta.channels = 3;
    write_shard(dir + "/" + shard_file_name(split, 0, 1), meta, images.data(), labels.data());
  }
  return dir;
}

Config resume_config(const std::string& data) {
  Config c;
  c.model.name = ModelName::simple_cnn;
  c.model.dropout = 0.5;
  c.data.path = data;
  c.data.batch_size = 16;
  c.data.augment.flip = true;
  c.data.augment.crop_padding = 2;
  c.optimizer.name = OptimizerName::adam;
  c.optimizer.lr = 0.003;
  c.scheduler.name = SchedulerName::cosine;
  c.train.epochs = 3;
  c.train.device = DeviceChoice::cpu;
  return c;
}

std::vector<at::Tensor> snapshot(const Trainer& t) {
  std::vector<at::Tensor> out;
  for (const auto& p : t.network()->parameters()) out.push_back(p.detach().clone());
  return out;
}

void check_resume(const Config& c) {
  auto& world = test::world();
  auto backend = make_backend(world, BackendOptions{});
  // One file per test: ctest runs the tests that share this function side by side.
  const std::string ckpt =
      ft::test::temp_dir() + "/resume-" + ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".ckpt";
  remove_checkpoints(ckpt);

  Trainer straight(c, world, *backend, at::Device(at::kCPU));
  const auto expected = straight.run();
  const auto expected_params = snapshot(straight);

  TrainerOptions options;
  options.checkpoint_path = ckpt;
  install_stop_handlers();
  std::raise(SIGUSR1);  // stop after the first optimizer step
  Trainer first(c, world, *backend, at::Device(at::kCPU), options);
  EXPECT_THROW(first.run(), Interrupted);
  clear_stop_request();
  ASSERT_TRUE(paths::exists(ckpt));

  Trainer resumed(c, world, *backend, at::Device(at::kCPU), options);
  const auto outcome = resumed.run();
  // The trainer leaves the checkpoint for its caller to remove once the results are written.
  EXPECT_TRUE(paths::exists(ckpt));
  remove_checkpoints(ckpt);
  const auto params = snapshot(resumed);
  ASSERT_EQ(params.size(), expected_params.size());
  for (std::size_t i = 0; i < params.size(); ++i) EXPECT_TRUE(at::equal(params[i], expected_params[i])) << i;
  ASSERT_EQ(outcome.epochs.size(), expected.epochs.size());
  for (std::size_t e = 0; e < outcome.epochs.size(); ++e) {
    EXPECT_DOUBLE_EQ(outcome.epochs[e].train_loss, expected.epochs[e].train_loss) << e;
    EXPECT_DOUBLE_EQ(outcome.epochs[e].test_acc, expected.epochs[e].test_acc) << e;
  }
  EXPECT_EQ(outcome.summary.optimizer_steps, expected.summary.optimizer_steps);
}

TEST(CheckpointResume, InterruptedRunEndsLikeUninterruptedOne) { check_resume(resume_config(tiny_shards())); }

// The trainer's run with its standard output kept in `printed`; no outcome when it stopped (Interrupted).
std::optional<TrainOutcome> run_printing(Trainer& trainer, std::string& printed) {
  ::testing::internal::CaptureStdout();
  try {
    std::optional<TrainOutcome> outcome = trainer.run();
    printed = ::testing::internal::GetCapturedStdout();
    return outcome;
  } catch (const Interrupted&) {
    printed = ::testing::internal::GetCapturedStdout();
    return std::nullopt;
  } catch (...) {
    printed = ::testing::internal::GetCapturedStdout();
    throw;
  }
}

// Stopped after every single optimizer step and resumed each time (within epochs and at their ends, in every
// epoch), the run still ends with the uninterrupted run's parameters, history and step count, and each
// segment says where it goes on: the epoch and the steps of it already done.
TEST(CheckpointResume, StoppedAfterEveryStepEndsLikeUninterruptedOne) {
  auto& world = test::world();
  auto backend = make_backend(world, BackendOptions{});
  const Config c = resume_config(tiny_shards());  // 96 images in batches of 16: 6 steps per epoch, 3 epochs
  Trainer straight(c, world, *backend, at::Device(at::kCPU));
  const auto expected = straight.run();
  const auto expected_params = snapshot(straight);

  TrainerOptions options;
  options.checkpoint_path = ft::test::temp_dir() + "/resume-every-step.ckpt";
  remove_checkpoints(options.checkpoint_path);
  install_stop_handlers();
  std::optional<TrainOutcome> outcome;
  int segments = 0;
  while (!outcome && segments < 30) {
    ++segments;
    std::raise(SIGUSR1);  // this segment stops after its first step
    Trainer part(c, world, *backend, at::Device(at::kCPU), options);
    std::string printed;
    outcome = run_printing(part, printed);
    clear_stop_request();
    if (segments > 1) {
      const int done = segments - 1, epoch = (done - 1) / 6 + 1;  // a stop after an epoch's last step stays in it
      const std::string where = cat(" at epoch ", epoch, ", step ", done - 6 * (epoch - 1), "\n");
      EXPECT_NE(printed.find(where), std::string::npos) << "segment " << segments << " should go on" << where
                                                        << printed.substr(0, printed.find('\n'));
    }
    if (!outcome) continue;
    const auto params = snapshot(part);
    ASSERT_EQ(params.size(), expected_params.size());
    for (std::size_t i = 0; i < params.size(); ++i)
      EXPECT_TRUE(at::equal(params[i], expected_params[i])) << "parameter " << i << " after " << segments
                                                            << " segments";
  }
  remove_checkpoints(options.checkpoint_path);
  ASSERT_TRUE(outcome) << "the run did not finish within 30 segments";
  EXPECT_GE(segments, 18) << "a segment trained more than one of the 3 epochs x 6 steps";
  EXPECT_EQ(outcome->summary.optimizer_steps, expected.summary.optimizer_steps);
  ASSERT_EQ(outcome->epochs.size(), expected.epochs.size());
  for (std::size_t e = 0; e < outcome->epochs.size(); ++e) {
    EXPECT_DOUBLE_EQ(outcome->epochs[e].train_loss, expected.epochs[e].train_loss) << "epoch " << e + 1;
    EXPECT_DOUBLE_EQ(outcome->epochs[e].test_acc, expected.epochs[e].test_acc) << "epoch " << e + 1;
    EXPECT_DOUBLE_EQ(outcome->epochs[e].lr, expected.epochs[e].lr) << "epoch " << e + 1;
  }
}

// Lookahead's slow weights are part of the state: the stop lands between two pulls.
// The per-rank rows of the epochs before a checkpoint travel in it: a resumed run's table starts with them.
TEST(CheckpointResume, PerRankRowsOfEarlierEpochsAreKept) {
  auto& world = test::world();
  auto backend = make_backend(world, BackendOptions{});
  TrainerOptions options;
  options.checkpoint_path = ft::test::temp_dir() + "/rank-rows.ckpt";
  remove_checkpoints(options.checkpoint_path);
  Config c = resume_config(tiny_shards());
  c.train.epochs = 2;
  c.train.checkpoint_every = 1;  // written after epoch 1 and left for the caller
  const auto first = Trainer(c, world, *backend, at::Device(at::kCPU), options).run();
  c.train.epochs = 3;
  const auto resumed = Trainer(c, world, *backend, at::Device(at::kCPU), options).run();
  remove_checkpoints(options.checkpoint_path);
  ASSERT_EQ(first.rank_epochs.size(), 2u);
  ASSERT_EQ(resumed.rank_epochs.size(), 3u);
  EXPECT_EQ(resumed.rank_epochs[0].epoch, 1);
  EXPECT_EQ(resumed.rank_epochs[0].train_loss, first.rank_epochs[0].train_loss);
  EXPECT_EQ(resumed.rank_epochs[0].test_acc, first.rank_epochs[0].test_acc);
  EXPECT_EQ(resumed.rank_epochs[2].epoch, 3);
}

TEST(CheckpointResume, LookaheadAndAlternatingFlipsResumeExactly) {
  Config c = resume_config(tiny_shards());
  c.optimizer.name = OptimizerName::sgd;
  c.optimizer.lr = 0.05;
  c.optimizer.momentum = 0.9;
  c.train.lookahead_every = 2;
  c.train.tta = Tta::flip_translate;
  c.data.augment.alternate_flip = true;
  check_resume(c);
}

TEST(CheckpointResume, CheckpointOfAnotherConfigIsRefused) {
  auto& world = test::world();
  auto backend = make_backend(world, BackendOptions{});
  Config c = resume_config(tiny_shards());
  c.train.epochs = 1;
  const std::string ckpt = ft::test::temp_dir() + "/other.ckpt";
  remove_checkpoints(ckpt);
  TrainerOptions options;
  options.checkpoint_path = ckpt;
  install_stop_handlers();
  std::raise(SIGUSR1);
  EXPECT_THROW(Trainer(c, world, *backend, at::Device(at::kCPU), options).run(), Interrupted);
  clear_stop_request();
  c.optimizer.lr = 0.1;
  try {
    Trainer(c, world, *backend, at::Device(at::kCPU), options).run();
    FAIL() << "resumed from a checkpoint of a different config";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("different config"), std::string::npos) << e.what();
  }
  remove_checkpoints(ckpt);
}

}  // namespace
}  // namespace ft
