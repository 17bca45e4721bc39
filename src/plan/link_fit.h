// Alpha and beta of one network level from a sweep of all-reduce sizes: each measured time is the model's
// steps x alpha + bytes-moved x beta for the algorithm the backend ran at that size; beta is fitted where the
// sizes are large, alpha where they are small.
#pragma once

#include <vector>

#include "plan/link_model.h"

namespace ft {

struct SweepSample {
  double bytes = 0;    // the all-reduced buffer
  double seconds = 0;  // its median time
};

// The level's alpha and beta from samples measured on `ranks` ranks all on that level, the algorithm of each
// size chosen as `link.ring_min_bytes` chooses it. With four sizes or more, beta by least squares (with a free
// intercept) over the larger half of the sizes (the median size in both halves; with fewer, all of them). Each
// sample's latency is (time - beta's share) / alpha's coefficient, at least 0: alpha is the median over the ring's
// samples in the smaller half (any of the ring's, if none is; recursive doubling's, if the ring ran none),
// small_alpha the median over recursive doubling's (alpha, if it ran none). Throws
// ft::Error when fewer than two sizes were measured, a time is not positive, or the times do not grow with the
// size (no bandwidth term).
LinkLevel fit_level(const std::vector<SweepSample>& samples, int ranks, const LinkModel& link);

}  // namespace ft
