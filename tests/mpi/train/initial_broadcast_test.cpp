// Every replica starts from rank 0's weights: ranks given different seeds (so each would build other weights)
// all end build_replica with the network rank 0's seed makes, built here without any collective.
#include <gtest/gtest.h>

#include "models/network.h"
#include "train/replica.h"
#include "train_fixture.h"

namespace ft::test {
namespace {

TEST(InitialBroadcast, EveryRankStartsFromTheNetworkOfRankZerosSeed) {
  const World& world = ft::test::world();
  const Config c = small_config(synthetic_shards("initial_broadcast", 64, 2), "mpi");
  const RankSplits splits = load_rank_splits(c, world, at::Device(at::kCPU));
  const auto& meta = splits.train->meta();
  const InputShape shape{meta.channels, meta.height, meta.width, static_cast<int>(meta.class_names.size())};
  const auto seed_of = [&c](int rank) { return c.train.seed + 100 + rank; };

  Config own = c;
  own.train.seed = seed_of(world.rank());
  const auto replica = build_replica(own, *splits.train, world, at::Device(at::kCPU), at::kFloat);

  at::manual_seed(seed_of(0));
  const auto reference = make_network(c.model, shape);
  at::manual_seed(seed_of(1));
  const auto other = make_network(c.model, shape);
  const auto got = replica->parameters(), want = reference->parameters(), differs = other->parameters();
  ASSERT_EQ(got.size(), want.size());
  bool seeds_matter = false;
  for (std::size_t i = 0; i < got.size(); ++i) {
    EXPECT_TRUE(at::equal(got[i], want[i])) << "rank " << world.rank() << ", parameter " << i;
    seeds_matter = seeds_matter || !at::equal(want[i], differs[i]);
  }
  EXPECT_TRUE(seeds_matter) << "another seed builds the same weights: the test would not see a missing broadcast";
}

}  // namespace
}  // namespace ft::test
