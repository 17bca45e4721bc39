// How the batch follows the number of ranks when a run resumes on another world size: the per-rank batch,
// accumulation steps and learning-rate factor that keep (or scale from) the first segment's global batch.
#pragma once

#include <cstdint>
#include <string>

#include "config/choices.h"

namespace ft {

struct BatchLayout {
  int per_rank_batch = 1;        // images per rank per micro-batch
  int accumulation = 1;          // micro-batches per optimizer step
  std::int64_t global_batch = 1; // images per optimizer step over all ranks
  double lr_factor = 1;          // multiplies optimizer.lr
};

struct BatchRuleInput {
  std::int64_t reference_global = 0;  // the first segment's global batch
  int ranks = 1;                      // ranks now
  int batch = 1;                      // data.batch_size: the per-rank batch, and its upper bound
  int accumulation = 1;               // train.accumulation_steps
  ElasticBatch rule = ElasticBatch::global;
  LrScaling scaling = LrScaling::linear;
};

// global: the fewest accumulation steps a with ranks * a dividing the reference and a per-rank batch of
// at most data.batch_size (so memory per rank does not grow); throws ft::Error naming elastic.batch when
// no split exists. local: data.batch_size and train.accumulation_steps as configured, the learning rate
// scaled by the ratio of the global batches.
BatchLayout resolve_batch(const BatchRuleInput& in);

// One line for the log: the rule and what it resolved to, e.g. "elastic.batch global keeps 64 images per
// step: 1 rank x 32 x 2 accumulation steps (learning rate unchanged)".
std::string describe_batch(const BatchRuleInput& in, const BatchLayout& layout);

}  // namespace ft
