// Each rank draws from its own random stream (dropout masks differ between replicas, repeatably), and a
// multi-rank run stopped mid-epoch resumes every rank's stream and the epoch's partial metrics: it ends
// exactly like the straight run.
#include <gtest/gtest.h>

#include <cmath>
#include <csignal>

#include "comm/backend.h"
#include "io/paths.h"
#include "runtime/signals.h"
#include "optim/rank_streams.h"
#include "train/trainer.h"
#include "train_fixture.h"
#include "test_paths.h"

namespace ft::test {
namespace {

TEST(RankStreams, DropoutMasksDifferAcrossRanksAndRepeat) {
  const World& world = ft::test::world();
  seed_rank_streams(11, world.rank());
  const auto mask = at::dropout(at::ones({256}, at::kDouble), 0.5, /*train=*/true);
  seed_rank_streams(11, world.rank());
  EXPECT_TRUE(at::equal(mask, at::dropout(at::ones({256}, at::kDouble), 0.5, true))) << "stream not repeatable";
  const auto masks = world.allgather(bytes_of(mask));
  for (int r = 1; r < world.size(); ++r) EXPECT_NE(masks[r], masks[0]) << "rank " << r << " repeats rank 0's mask";
}

TEST(RankStreams, GatheredStatesRestoreEachRanksStream) {
  const World& world = ft::test::world();
  seed_rank_streams(5, world.rank());
  const auto states = gather_generators(world, at::Device(at::kCPU));
  ASSERT_EQ(states.size(), static_cast<std::size_t>(world.size()));
  const auto drawn = at::rand({8}, at::kDouble);
  at::manual_seed(999);
  restore_generators(states[static_cast<std::size_t>(world.rank())], at::Device(at::kCPU));
  EXPECT_TRUE(at::equal(drawn, at::rand({8}, at::kDouble)));
}

// Each rank's own training loss of a run whose every image is the same: the ranks' batches hold the same
// pixels and the replicas the same weights, so only dropout masks can make the ranks' losses differ.
std::vector<double> rank_train_losses(bool with_dropout) {
  const World& world = ft::test::world();
  Config c = small_config(synthetic_shards("identical_images", 64, 2, /*identical=*/true), "mpi");
  c.train.epochs = 1;
  if (with_dropout) {
    LayerSpec dropout;
    dropout.type = LayerType::dropout;
    dropout.p = 0.5;
    c.model.layers.insert(c.model.layers.end() - 1, dropout);
  }
  auto backend = make_backend(world, BackendOptions{});
  Trainer trainer(c, world, *backend, at::Device(at::kCPU));
  const auto outcome = trainer.run();
  std::vector<double> losses;
  for (const auto& row : outcome.rank_epochs) losses.push_back(row.train_loss);
  EXPECT_EQ(losses.size(), static_cast<std::size_t>(world.size())) << "one row per rank of the one epoch";
  return losses;
}

// The trainer's own seeding, seen in a real multi-rank run: without dropout the ranks' losses agree (the
// seam isolates dropout); with it every rank differs from rank 0, as its masks come from its own stream.
TEST(RankStreams, TrainerDrawsEachRanksOwnDropoutMasks) {
  if (ft::test::world().size() < 2) GTEST_SKIP() << "needs several ranks";
  const auto plain = rank_train_losses(false);
  for (std::size_t r = 1; r < plain.size(); ++r)
    ASSERT_NEAR(plain[r], plain[0], 1e-12 * std::abs(plain[0]))
        << "without dropout rank " << r << " differs from rank 0: the ranks do not see the same images";
  const auto dropped = rank_train_losses(true);
  for (std::size_t r = 1; r < dropped.size(); ++r)
    EXPECT_GT(std::abs(dropped[r] - dropped[0]), 1e-9)
        << "rank " << r << " trained with rank 0's dropout masks (loss " << dropped[r] << ")";
}

// Dropout before the classifier: with rank 0's stream restored on every rank the resumed replicas would
// draw other masks than the straight run and end elsewhere.
TEST(RankStreams, StoppedRunWithDropoutResumesExactly) {
  const World& world = ft::test::world();
  Config c = small_config(synthetic_shards("rank_streams", 96, 2), "mpi");
  LayerSpec dropout;
  dropout.type = LayerType::dropout;
  dropout.p = 0.5;
  c.model.layers.insert(c.model.layers.end() - 1, dropout);
  auto backend = make_backend(world, BackendOptions{});
  Trainer straight(c, world, *backend, at::Device(at::kCPU));
  const auto expected_run = straight.run();
  const auto expected = parameters_of(straight);

  TrainerOptions options;
  options.checkpoint_path = ft::test::temp_dir() + "/rank_streams.ckpt";
  if (world.rank() == 0) paths::remove(options.checkpoint_path);
  world.barrier();
  install_stop_handlers();
  std::raise(SIGUSR1);  // stop after the first optimizer step
  EXPECT_THROW(Trainer(c, world, *backend, at::Device(at::kCPU), options).run(), Interrupted);
  clear_stop_request();
  Trainer resumed(c, world, *backend, at::Device(at::kCPU), options);
  const auto outcome = resumed.run();
  // The interrupted epoch's metrics sum every rank's part from before and after the stop.
  ASSERT_EQ(outcome.epochs.size(), expected_run.epochs.size());
  for (std::size_t e = 0; e < outcome.epochs.size(); ++e) {
    EXPECT_DOUBLE_EQ(outcome.epochs[e].train_loss, expected_run.epochs[e].train_loss) << "epoch " << e + 1;
    EXPECT_DOUBLE_EQ(outcome.epochs[e].train_acc, expected_run.epochs[e].train_acc) << "epoch " << e + 1;
  }
  const auto params = parameters_of(resumed);
  ASSERT_EQ(params.size(), expected.size());
  for (std::size_t i = 0; i < params.size(); ++i) EXPECT_TRUE(at::equal(params[i], expected[i])) << "parameter " << i;
  world.barrier();
  if (world.rank() == 0) paths::remove(options.checkpoint_path);
}

}  // namespace
}  // namespace ft::test
