// The elastic batch rule as a pure function of the reference global batch and the new world, so it is
// unit-tested without ranks and the trainer only applies what it returns.
#include "train/batch_rule.h"

#include <cmath>

#include "runtime/error.h"

namespace ft {
namespace {

BatchLayout keep_global(const BatchRuleInput& in) {
  const std::int64_t g = in.reference_global;
  for (std::int64_t a = 1; a <= g; ++a) {
    const std::int64_t split = std::int64_t{in.ranks} * a;
    if (g % split != 0) continue;
    const std::int64_t b = g / split;
    if (b <= in.batch) return {static_cast<int>(b), static_cast<int>(a), g, 1.0};
  }
  throw Error(cat("elastic.batch global: the run's global batch of ", g, " images per step cannot be split over ",
                  in.ranks, " ranks (it is not a multiple of ", in.ranks,
                  "): resume on a number of ranks that divides it, or set elastic.batch: local to keep "
                  "data.batch_size per rank and scale the learning rate"));
}

double lr_factor(LrScaling scaling, double ratio) {
  switch (scaling) {
    case LrScaling::linear: return ratio;
    case LrScaling::sqrt: return std::sqrt(ratio);
    case LrScaling::none: return 1.0;
  }
  return 1.0;
}

}  // namespace

BatchLayout resolve_batch(const BatchRuleInput& in) {
  FT_CHECK(in.reference_global > 0 && in.ranks > 0 && in.batch > 0 && in.accumulation > 0,
           "resolve_batch needs positive sizes");
  if (in.rule == ElasticBatch::global) return keep_global(in);
  const std::int64_t g = std::int64_t{in.ranks} * in.batch * in.accumulation;
  return {in.batch, in.accumulation, g,
          lr_factor(in.scaling, static_cast<double>(g) / static_cast<double>(in.reference_global))};
}

std::string describe_batch(const BatchRuleInput& in, const BatchLayout& layout) {
  const std::string split = cat(in.ranks, in.ranks == 1 ? " rank" : " ranks", " x ", layout.per_rank_batch,
                                layout.accumulation > 1 ? cat(" x ", layout.accumulation, " accumulation steps") : "");
  if (in.rule == ElasticBatch::global)
    return cat("elastic.batch global keeps ", layout.global_batch, " images per step: ", split,
               " (learning rate unchanged)");
  return cat("elastic.batch local keeps data.batch_size ", in.batch, " per rank: ", layout.global_batch,
             " images per step (", split, ") against ", in.reference_global, " at the start; elastic.lr_scaling ",
             choice_name(in.scaling), " multiplies the learning rate by ", layout.lr_factor);
}

}  // namespace ft
