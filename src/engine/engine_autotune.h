// Start-up tuning of the fusion buckets: a few candidate (bucket, first bucket) sizes, each timed on
// gradients shaped like the model's own, and the fastest kept, the same choice on every rank.
#pragma once

#include <vector>

#include "engine/engine.h"

namespace ft {

struct BucketSizes {
  double bucket_mib = DistributedConfig{}.bucket_mib;
  double first_bucket_mib = DistributedConfig{}.first_bucket_mib;
};

struct BucketTrial {
  BucketSizes sizes;
  double seconds = 0;  // median fused all-reduce time, the maximum over ranks
};

struct AutotuneResult {
  BucketSizes best;
  std::vector<BucketTrial> trials;  // in candidate order
};

// The default candidates: fusion thresholds of 4 to 64 MiB, with first buckets of 1 and 4 MiB.
std::vector<BucketSizes> default_bucket_candidates();

// Collective over world. Times `iterations` fused all-reduces (after one untimed) of zero gradients
// shaped like `parameters` (stand-ins: the parameters and their gradients are not touched) for each
// candidate, with `options` otherwise as given. Every rank returns the same result: times are maxima
// over ranks and a tie keeps the earlier candidate.
AutotuneResult autotune_buckets(Backend& backend, const World& world, const std::vector<NamedTensor>& parameters,
                                GradientEngineOptions options,
                                const std::vector<BucketSizes>& candidates = default_bucket_candidates(),
                                int iterations = 3);

// Tunes options.bucket_mib and options.first_bucket_mib with the default candidates and prints the
// choice and each candidate's time on rank 0 ("autotuned_bucket_mib=..."). Collective over world.
void apply_autotuned_buckets(Backend& backend, const World& world, const std::vector<NamedTensor>& parameters,
                             GradientEngineOptions& options);

}  // namespace ft
