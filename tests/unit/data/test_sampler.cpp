// Tests of epoch plans: equal steps on every rank for drop and pad, reproducibility from the seed,
// and the global mode's slices being exactly a single-rank run's batches split across ranks.
#include <gtest/gtest.h>

#include <set>

#include "data/sampler.h"
#include "shard/shard_reader.h"
#include "runtime/error.h"

namespace ft {
namespace {

SamplerSetup local(std::int64_t n, std::int64_t lo, std::int64_t hi, int rank, int world, int batch) {
  SamplerSetup s;
  s.local_size = n;
  s.min_local = lo;
  s.max_local = hi;
  s.rank = rank;
  s.world = world;
  s.batch = batch;
  s.seed = 7;
  return s;
}

TEST(Sampler, UnevenSlicesGiveEqualStepsOnEveryRank) {
  // 103 images over 3 ranks: slices 35, 34, 34.
  for (const Remainder remainder : {Remainder::drop, Remainder::pad}) {
    std::set<std::int64_t> steps;
    for (int r = 0; r < 3; ++r) {
      const auto [b, e] = slice_of(103, r, 3);
      auto s = local(e - b, 34, 35, r, 3, 8);
      s.remainder = remainder;
      const Sampler sampler(s);
      steps.insert(sampler.steps_per_epoch());
      const auto idx = sampler.epoch_indices(1);
      EXPECT_EQ(idx.size(0), sampler.steps_per_epoch() * 8);
      EXPECT_LT(idx.max().item<std::int64_t>(), e - b);
    }
    EXPECT_EQ(steps.size(), 1u) << remainder;
    EXPECT_EQ(*steps.begin(), remainder == Remainder::drop ? 4 : 5);
  }
}

TEST(Sampler, ShuffleIsSeededByEpochAndRank) {
  const Sampler a(local(100, 100, 100, 0, 2, 10)), b(local(100, 100, 100, 1, 2, 10));
  EXPECT_TRUE(at::equal(a.epoch_indices(3), a.epoch_indices(3)));
  EXPECT_FALSE(at::equal(a.epoch_indices(3), a.epoch_indices(4)));
  EXPECT_FALSE(at::equal(a.epoch_indices(3), b.epoch_indices(3)));
  const auto sorted = std::get<0>(a.epoch_indices(2).sort());
  EXPECT_TRUE(at::equal(sorted, at::arange(100, at::kLong)));  // a permutation: no repeats when it divides
}

TEST(Sampler, GlobalModeSplitsTheSingleRankBatches) {
  SamplerSetup one;
  one.shuffle = Shuffle::global;
  one.local_size = 50;
  one.batch = 12;
  one.seed = 3;
  const auto whole = Sampler(one).epoch_indices(1).view({-1, 12});
  for (int r = 0; r < 3; ++r) {
    SamplerSetup part = one;
    part.batch = 4;
    part.world = 3;
    part.rank = r;
    const auto mine = Sampler(part).epoch_indices(1).view({-1, 4});
    EXPECT_TRUE(at::equal(mine, whole.narrow(1, 4 * r, 4))) << r;
  }
}

TEST(Sampler, BatchLargerThanSliceIsAClearError) {
  try {
    Sampler(local(10, 10, 12, 0, 2, 32));
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("data.batch_size 32"), std::string::npos) << e.what();
  }
  EXPECT_THROW(Sampler(local(0, 0, 1, 0, 2, 1)), Error);
}

TEST(Slices, ContiguousNearEqualAndComplete) {
  std::int64_t next = 0;
  for (int r = 0; r < 7; ++r) {
    const auto [b, e] = slice_of(100, r, 7);
    EXPECT_EQ(b, next);
    EXPECT_TRUE(e - b == 14 || e - b == 15);
    next = e;
  }
  EXPECT_EQ(next, 100);
}

}  // namespace
}  // namespace ft
