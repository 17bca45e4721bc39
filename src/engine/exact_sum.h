// Order-independent sums for distributed.reproducible: every micro-batch's values turned into 64-bit fixed
// point with one scale per segment that every rank agrees on, summed as integers here and across ranks.
#pragma once

#include <ATen/ATen.h>

#include <cstdint>
#include <vector>

namespace ft {

class World;

// One exponent per segment for values whose largest magnitude over all micro-batches is `max` and of which
// `terms` are summed: max x terms x 2^e stays below 2^62, so no sum of `terms` of them, in any order,
// overflows an int64. 0 for a segment of zeros.
int exact_sum_exponent(double max, std::int64_t terms);

// The micro-batches of one step: each fills a row (its values, segment after segment), then sum() adds every
// rank's rows exactly. A value v becomes round(v x 2^e) for its segment's e: what is lost is below 2^-e, at
// most 2^-60 of the segment's largest value (for 4 micro-batches); fp32's own unit in the last place is 2^-24
// of each value, so only values 2^36 times smaller than their segment's largest lose bits against fp32.
class ExactSum {
 public:
  // `segments`: element counts of the values summed (a tensor each: a gradient, a statistic, the loss);
  // `rows`: the micro-batches this rank adds per step; `terms`: the micro-batches of all ranks per step;
  // `options`: the rows' device and floating-point type (that of the values).
  ExactSum(std::vector<std::int64_t> segments, int rows, int terms, const at::TensorOptions& options);

  // The row of micro-batch `row` (0 <= row < rows), to be filled with its values in segment order.
  at::Tensor row(int row) { return rows_[row]; }
  std::int64_t width() const { return width_; }

  // Collective: the sum over every rank's rows, float64 [width] on the rows' device, the same bits on every
  // rank whatever the number of ranks and the order they combine in. Two host collectives: the segments'
  // largest magnitudes (maximum) and the integer sums.
  at::Tensor sum(const World& world);

 private:
  std::vector<std::int64_t> segments_;
  std::int64_t width_ = 0;
  int terms_;
  at::Tensor rows_;  // [rows, width]
};

}  // namespace ft
