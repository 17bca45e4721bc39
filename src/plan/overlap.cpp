// The one-stream schedule of overlap.h: a running end time carried from bucket to bucket, each bucket's pace
// the one beside compute until backward ends.
#include "plan/overlap.h"

#include <algorithm>

#include "runtime/error.h"

namespace ft {
namespace {

// When an all-reduce started at `start` ends: at the pace beside compute (`beside` for the whole) until backward
// ends, at its own (`alone`) after.
double end_of(double start, double alone, double beside, double backward_s) {
  if (start >= backward_s) return start + alone;
  if (start + beside <= backward_s) return start + beside;
  const double done = (backward_s - start) / beside;
  return backward_s + (1 - done) * alone;
}

}  // namespace

Overlap simulate_overlap(const std::vector<double>& ready_s, const std::vector<double>& duration_s,
                         double backward_s, const std::vector<double>& beside_s) {
  FT_CHECK(ready_s.size() == duration_s.size(), ready_s.size(), " ready times for ", duration_s.size(), " buckets");
  FT_CHECK(beside_s.empty() || beside_s.size() == duration_s.size(), beside_s.size(), " paces beside compute for ",
           duration_s.size(), " buckets");
  Overlap out;
  double end = 0;
  for (std::size_t b = 0; b < ready_s.size(); ++b) {
    const double start = std::max(end, ready_s[b]);
    end = beside_s.empty() ? start + duration_s[b] : end_of(start, duration_s[b], beside_s[b], backward_s);
    out.comm_s += end - start;
  }
  if (ready_s.empty()) return out;
  out.finish_s = end;
  out.exposed_s = std::max(0.0, end - backward_s);
  return out;
}

}  // namespace ft
