// The one-stream schedule of overlap.h: a running end time carried from bucket to bucket.
#include "plan/overlap.h"

#include <algorithm>

#include "runtime/error.h"

namespace ft {

Overlap simulate_overlap(const std::vector<double>& ready_s, const std::vector<double>& duration_s,
                         double backward_s) {
  FT_CHECK(ready_s.size() == duration_s.size(), ready_s.size(), " ready times for ", duration_s.size(), " buckets");
  Overlap out;
  double end = 0;
  for (std::size_t b = 0; b < ready_s.size(); ++b) {
    end = std::max(end, ready_s[b]) + duration_s[b];
    out.comm_s += duration_s[b];
  }
  if (ready_s.empty()) return out;
  out.finish_s = end;
  out.exposed_s = std::max(0.0, end - backward_s);
  return out;
}

}  // namespace ft
