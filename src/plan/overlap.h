// The overlap of backward and the bucket all-reduces as an event simulation: buckets become ready at their
// measured times and are reduced one after another, in plan order, on one communication stream.
#pragma once

#include <vector>

namespace ft {

struct Overlap {
  double comm_s = 0;     // the all-reduces' spans summed (time the communication stream was busy)
  double finish_s = 0;   // when the last all-reduce finished, seconds after backward began
  double exposed_s = 0;  // max(0, finish_s - backward_s): what the step waits for after backward
};

// Bucket b starts at max(ready_s[b], the end of bucket b - 1) and takes duration_s[b]. Where beside_s is given
// (one per bucket: the same all-reduce timed beside compute on every core), a bucket advances at that pace while
// backward runs and at its own once backward has ended: started at t before backward_s, it has done
// (backward_s - t) / beside_s[b] of its work by then. Lists in plan order and of one length; no buckets: nothing
// to wait for.
Overlap simulate_overlap(const std::vector<double>& ready_s, const std::vector<double>& duration_s,
                         double backward_s, const std::vector<double>& beside_s = {});

}  // namespace ft
