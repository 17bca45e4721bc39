// Which local images each step of an epoch uses, such that every rank runs the same number of steps
// (remainder drop or pad) and shuffles are reproducible from (seed, epoch, rank).
#pragma once

#include <ATen/ATen.h>

#include <cstdint>
#include <string>

#include "config/choices.h"

namespace ft {

struct SamplerSetup {
  Shuffle shuffle = Shuffle::local;
  Remainder remainder = Remainder::drop;
  std::int64_t local_size = 0;     // images this rank holds (global: the whole split)
  std::int64_t min_local = 0, max_local = 0;  // over all ranks (local mode)
  int rank = 0, world = 1;
  int batch = 1;
  std::uint64_t seed = 0;
};

class Sampler {
 public:
  explicit Sampler(const SamplerSetup& setup);
  std::int64_t steps_per_epoch() const { return steps_; }
  // Local indices for the whole epoch, step-major: [steps * batch] int64 on the CPU.
  at::Tensor epoch_indices(int epoch) const;

 private:
  SamplerSetup s_;
  std::int64_t steps_ = 0;
};

}  // namespace ft
