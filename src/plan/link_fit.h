// Alpha and beta of one network level from a sweep of all-reduce sizes: each measured time is the model's
// steps x alpha + bytes-moved x beta for the algorithm the backend ran at that size, fitted to relative error.
#pragma once

#include <vector>

#include "plan/link_model.h"

namespace ft {

struct SweepSample {
  double bytes = 0;    // the all-reduced buffer
  double seconds = 0;  // its median time
};

// The level's alpha and beta from samples measured on `ranks` ranks all on that level, the algorithm of each
// size chosen as `link.ring_min_bytes` chooses it. Weighted least squares on the relative error (a 4 KiB and a
// 16 MiB all-reduce count alike); a negative alpha is refitted as zero. Throws ft::Error when fewer than two
// sizes were measured, a time is not positive, or the times do not grow with the size (no bandwidth term).
LinkLevel fit_level(const std::vector<SweepSample>& samples, int ranks, const LinkModel& link);

}  // namespace ft
