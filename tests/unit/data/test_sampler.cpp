// Tests of epoch plans: equal steps on every rank for drop and pad, reproducibility from the seed,
// and the global mode's slices being exactly a single-rank run's batches split across ranks.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include <ATen/CPUGeneratorImpl.h>

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

// SplitMix64's output function (Steele, Lea and Flood 2014), written here from its definition.
std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

at::Tensor randperm_seeded(std::int64_t n, std::uint64_t seed) {
  auto generator = at::make_generator<at::CPUGeneratorImpl>(seed);
  return at::randperm(n, generator, at::TensorOptions().dtype(at::kLong));
}

// The order docs/training.md promises (a checkpoint resumed in the middle of an epoch by another build continues
// the same order): epoch seed = h(seed ^ h(0x5eed0000 + epoch)); local shuffling permutes the rank's slice with
// h(epoch seed ^ h(rank + 1)), global shuffling the whole split with the epoch seed; h is SplitMix64.
TEST(Sampler, OrderIsTheDocumentedFunctionOfSeedEpochAndRank) {
  for (const int epoch : {0, 1, 7}) {
    const std::uint64_t epoch_seed = splitmix64(7 ^ splitmix64(0x5eed0000ull + static_cast<std::uint64_t>(epoch)));
    for (int rank = 0; rank < 3; ++rank) {
      const Sampler sampler(local(40, 40, 40, rank, 3, 8));
      const std::uint64_t rank_seed = splitmix64(epoch_seed ^ splitmix64(static_cast<std::uint64_t>(rank) + 1));
      const auto expected = randperm_seeded(40, rank_seed);
      EXPECT_TRUE(at::equal(sampler.epoch_indices(epoch), expected)) << "epoch " << epoch << " rank " << rank;
    }
    SamplerSetup global = local(48, 48, 48, 1, 3, 4);
    global.shuffle = Shuffle::global;
    const auto whole = randperm_seeded(48, epoch_seed).view({4, 3, 4});  // steps x ranks x batch
    EXPECT_TRUE(at::equal(Sampler(global).epoch_indices(epoch), whole.select(1, 1).reshape({16})))
        << "global, epoch " << epoch;
  }
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

// Steps per epoch from the rule's definition: drop keeps the most steps whose batches all hold distinct images
// (the largest s with s x unit <= images), pad the fewest that take every image (the smallest s with
// s x unit >= images). Counted up here, not divided.
std::int64_t steps_by_definition(std::int64_t images, std::int64_t unit, Remainder remainder) {
  std::int64_t s = 0;
  if (remainder == Remainder::drop) {
    while ((s + 1) * unit <= images) ++s;
  } else {
    while (s * unit < images) ++s;
  }
  return s;
}

// Every step rule (drop, pad; local, global shuffling) at sizes that divide exactly, one over and one under.
TEST(Sampler, StepCountsAtExactMultiplesOneOverAndOneUnder) {
  for (const Shuffle shuffle : {Shuffle::local, Shuffle::global}) {
    for (const Remainder remainder : {Remainder::drop, Remainder::pad}) {
      for (const int world : {1, 2, 3}) {
        for (const int batch : {1, 4, 5}) {
          const std::int64_t unit = shuffle == Shuffle::global ? std::int64_t{batch} * world : batch;
          for (const std::int64_t multiple : {1, 2, 3}) {
            for (const std::int64_t off : {-1, 0, 1}) {
              const std::int64_t images = multiple * unit + off;  // global: the split; local: the smallest slice
              const std::int64_t expected = steps_by_definition(images, unit, remainder);
              SamplerSetup s = local(images, images, images, 0, world, batch);
              s.shuffle = shuffle;
              s.remainder = remainder;
              const std::string where = ::testing::PrintToString(shuffle) + " " +
                                        ::testing::PrintToString(remainder) + " world " + std::to_string(world) +
                                        " batch " + std::to_string(batch) + " images " + std::to_string(images);
              if (expected == 0) {
                EXPECT_THROW(Sampler{s}, Error) << where;
                continue;
              }
              const Sampler sampler(s);
              ASSERT_EQ(sampler.steps_per_epoch(), expected) << where;
              EXPECT_EQ(sampler.epoch_indices(1).size(0), expected * batch) << where;
            }
          }
        }
      }
    }
  }
}

// With pad, the padded epoch repeats an image only where the images do not fill the last step: at an exact
// multiple of the global batch the ranks' indices together are one permutation of the split, one over
// repeats the fewest images that fill the extra step, and every image is taken.
TEST(Sampler, GlobalPadRepeatsOnlyWhatFillsTheLastStep) {
  for (const std::int64_t images : {24, 25, 23}) {
    std::vector<std::int64_t> counts(static_cast<std::size_t>(images), 0);
    std::int64_t taken = 0;
    for (int r = 0; r < 3; ++r) {
      SamplerSetup s;
      s.shuffle = Shuffle::global;
      s.remainder = Remainder::pad;
      s.local_size = images;
      s.rank = r;
      s.world = 3;
      s.batch = 4;
      s.seed = 11;
      const auto idx = Sampler(s).epoch_indices(2);
      for (std::int64_t i = 0; i < idx.size(0); ++i) ++counts[static_cast<std::size_t>(idx[i].item<std::int64_t>())];
      taken += idx.size(0);
    }
    const std::int64_t global_batch = 12, steps = (images + global_batch - 1) / global_batch;
    EXPECT_EQ(taken, steps * global_batch) << images;
    EXPECT_EQ(*std::min_element(counts.begin(), counts.end()), 1) << images << ": every image taken";
    EXPECT_LE(*std::max_element(counts.begin(), counts.end()), 2) << images;
    EXPECT_EQ(std::count(counts.begin(), counts.end(), 2), taken - images) << images << ": repeats only to fill";
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
