// The fusion bucket sizes a config gives (distributed.bucket_mib, first_bucket_mib, last_bucket_mib) reach the
// gradient engine of a multi-rank run as given, and the run's summary says which sizes it used.
#include <gtest/gtest.h>

#include "comm/backend.h"
#include "train/trainer.h"
#include "train_fixture.h"

namespace ft::test {
namespace {

TEST(BucketSizes, TheConfiguredSizesAreTheOnesTheRunUses) {
  const World& world = ft::test::world();
  const auto path = synthetic_shards("bucket-sizes", 64, 2);
  struct Sizes {
    double bucket, first, last;
  };
  // Three distinct sizes (none the default), then all three equal: the edge the loader allows.
  for (const Sizes& s : {Sizes{2.0, 0.5, 0.125}, Sizes{0.75, 0.75, 0.75}}) {
    Config c = small_config(path, "mpi");
    c.train.epochs = 1;
    c.distributed.autotune = false;
    c.distributed.bucket_mib = s.bucket;
    c.distributed.first_bucket_mib = s.first;
    c.distributed.last_bucket_mib = s.last;
    auto backend = make_backend(world, BackendOptions{});
    const RunSummary summary = Trainer(c, world, *backend, at::Device(at::kCPU)).run().summary;
    EXPECT_EQ(summary.bucket_mib, s.bucket) << "rank " << world.rank();
    EXPECT_EQ(summary.first_bucket_mib, s.first) << "rank " << world.rank();
    EXPECT_EQ(summary.last_bucket_mib, s.last) << "rank " << world.rank();
    EXPECT_FALSE(summary.buckets_autotuned);
  }
}

}  // namespace
}  // namespace ft::test
