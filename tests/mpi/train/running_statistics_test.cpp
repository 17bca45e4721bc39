// BatchNorm running statistics, which drift apart between replicas, are averaged over ranks before every
// evaluation: the network a run ends with (and saves) is the same on every rank, and is what was scored.
#include <gtest/gtest.h>

#include "comm/backend.h"
#include "train/trainer.h"
#include "train_fixture.h"

namespace ft::test {
namespace {

TEST(RunningStatistics, AveragedOverRanksBeforeEvaluation) {
  const World& world = ft::test::world();
  Config c = small_config(synthetic_shards("running_statistics", 96, 2), "mpi");
  c.data.shuffle = Shuffle::local;  // each replica normalises its own images: statistics differ by rank
  LayerSpec bn;
  bn.type = LayerType::bn;
  c.model.layers.insert(c.model.layers.begin() + 1, bn);
  auto backend = make_backend(world, BackendOptions{});
  Trainer trainer(c, world, *backend, at::Device(at::kCPU));
  trainer.run();
  int floating = 0;
  for (const auto& b : trainer.network()->buffers()) {
    if (!b.is_floating_point()) continue;
    ++floating;
    const auto all = world.allgather(bytes_of(b));
    for (int r = 1; r < world.size(); ++r) EXPECT_EQ(all[r], all[0]) << "rank " << r << " keeps its own statistics";
  }
  EXPECT_GE(floating, 2) << "running mean and variance of the one BatchNorm layer";
}

}  // namespace
}  // namespace ft::test
