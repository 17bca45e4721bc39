// train.warmup_steps on several ranks: the warm-up's steps all-reduce too (PowerSGD compressing from the first
// step, its factors and every rank's error feedback changing), yet the run ends with the weights and figures of
// the run without them, bit for bit, and its communication statistics count only the run's own steps.
#include <gtest/gtest.h>

#include "comm/backend.h"
#include "train/trainer.h"
#include "train_fixture.h"

namespace ft::test {
namespace {

TEST(WarmUpRanks, PowerSgdStateAndEngineCountsAreUnchanged) {
  const World& world = ft::test::world();
  Config c = small_config(synthetic_shards("warm_up_ranks", 96, 2), "mpi");
  c.data.shuffle = Shuffle::local;
  c.distributed.compression = Compression::powersgd;
  c.distributed.powersgd_start_step = 0;
  auto backend = make_backend(world, BackendOptions{});
  Trainer plain(c, world, *backend, at::Device(at::kCPU));
  const TrainOutcome without = plain.run();
  c.train.warmup_steps = 3;
  Trainer warmed(c, world, *backend, at::Device(at::kCPU));
  const TrainOutcome with = warmed.run();

  const auto a = plain.network()->parameters(), b = warmed.network()->parameters();
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i) EXPECT_TRUE(at::equal(a[i], b[i])) << "parameter " << i;
  ASSERT_EQ(with.epochs.size(), without.epochs.size());
  for (std::size_t e = 0; e < with.epochs.size(); ++e) {
    EXPECT_EQ(with.epochs[e].train_loss, without.epochs[e].train_loss) << "epoch " << e + 1;
    EXPECT_EQ(with.epochs[e].test_acc, without.epochs[e].test_acc) << "epoch " << e + 1;
  }
  EXPECT_EQ(with.summary.warmup_steps, 3);
  EXPECT_GT(without.rank.allreduce_bytes, 0);
  EXPECT_EQ(with.rank.allreduce_bytes, without.rank.allreduce_bytes) << "the warm-up's all-reduces were counted";
}

}  // namespace
}  // namespace ft::test
