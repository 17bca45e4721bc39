// Alpha and beta of one network level from a sweep of all-reduce sizes: each measured time is its algorithm's
// steps x alpha + bytes moved x beta; beta is fitted where the sizes are large, each algorithm's alpha where its
// sizes are small.
#pragma once

#include <vector>

#include "plan/link_model.h"

namespace ft {

struct SweepSample {
  double bytes = 0;    // the all-reduced buffer
  double seconds = 0;  // its median time
  bool ring = true;    // run as the ring (else recursive doubling: MPI_Iallreduce)
  double cpu_s = -1;   // the machine's busy CPU seconds per all-reduce of it (-1: not measured)
};

// The level's alpha, small_alpha and beta from samples measured on `ranks` ranks all on that level. Beta: least
// squares (with a free intercept) over the larger half of the ring's sizes (recursive doubling's, if the ring ran
// none; the median size in both halves; all sizes when fewer than four). Each sample's latency is (time - beta's
// share) / its alpha coefficient, at least 0: alpha is the median over the ring's smaller half, small_alpha the
// median over recursive doubling's samples (each the other where its algorithm ran none). cpu_s_per_byte: the
// samples' CPU over the bytes all `ranks` sent in them, over the same larger half as beta, on `cores` cores (0
// when no sample there has its CPU measured). Throws ft::Error when fewer than two sizes were measured, a time is
// not positive, or the times do not grow with the size.
LinkLevel fit_level(const std::vector<SweepSample>& samples, int ranks, int cores = 0);

}  // namespace ft
