// Epoch index plans for local and global shuffling. Step counts are derived from the smallest (drop)
// or largest (pad) rank slice, so no rank ever waits in an all-reduce that another rank never starts.
#include "data/sampler.h"

#include <ATen/CPUGeneratorImpl.h>

#include "kernels/augment.h"
#include "runtime/error.h"

namespace ft {
namespace {

at::Tensor permutation(std::int64_t n, std::uint64_t seed) {
  auto generator = at::make_generator<at::CPUGeneratorImpl>(seed);
  return at::randperm(n, generator, at::TensorOptions().dtype(at::kLong));
}

// Repeats `perm` cyclically to `length` entries (padding re-uses images of this epoch's shuffle).
at::Tensor cycle_to(const at::Tensor& perm, std::int64_t length) {
  const std::int64_t n = perm.size(0);
  if (length <= n) return perm.narrow(0, 0, length);
  return perm.repeat({(length + n - 1) / n}).narrow(0, 0, length);
}

}  // namespace

Sampler::Sampler(const SamplerSetup& setup) : s_(setup) {
  const bool pad = s_.remainder == Remainder::pad;
  if (s_.shuffle == Shuffle::global) {
    const std::int64_t global_batch = std::int64_t{s_.batch} * s_.world;
    steps_ = pad ? (s_.local_size + global_batch - 1) / global_batch : s_.local_size / global_batch;
    FT_REQUIRE(steps_ > 0, "data.batch_size ", s_.batch, " x ", s_.world, " ranks = ", global_batch,
               " exceeds the ", s_.local_size, " training images: no full step per epoch (lower the batch "
               "size or use data.remainder: pad)");
  } else {
    FT_REQUIRE(s_.min_local > 0, "some rank holds no training images (", s_.world,
               " ranks for too few images): use fewer ranks");
    steps_ = pad ? (s_.max_local + s_.batch - 1) / s_.batch : s_.min_local / s_.batch;
    FT_REQUIRE(steps_ > 0, "data.batch_size ", s_.batch, " is larger than the smallest rank's slice of ",
               s_.min_local, " training images: lower the batch size or use data.remainder: pad");
  }
}

at::Tensor Sampler::epoch_indices(int epoch) const {
  const std::int64_t per_rank = steps_ * s_.batch;
  const std::uint64_t epoch_seed = mix64(s_.seed ^ mix64(0x5eed0000ull + static_cast<std::uint64_t>(epoch)));
  if (s_.shuffle == Shuffle::global) {
    const std::int64_t global_batch = std::int64_t{s_.batch} * s_.world;
    const auto perm = cycle_to(permutation(s_.local_size, epoch_seed), steps_ * global_batch);
    // Step-major global order: rank r takes the r-th block of each global batch.
    return perm.view({steps_, s_.world, s_.batch}).select(1, s_.rank).reshape({per_rank}).contiguous();
  }
  const std::uint64_t rank_seed = mix64(epoch_seed ^ mix64(static_cast<std::uint64_t>(s_.rank) + 1));
  return cycle_to(permutation(s_.local_size, rank_seed), per_rank).contiguous();
}

}  // namespace ft
