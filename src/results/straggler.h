// Naming the rank that holds the others back: from every rank's compute and all-reduce wait per step (or per
// window of steps), the rank whose compute exceeds the other ranks' median by more than a set share in most
// steps, and the share of their step the others spent waiting for it.
#pragma once

#include <string>
#include <vector>

namespace ft {

// One rank's steps in order: compute (data, forward, backward, optimizer) and the wait for the all-reduce.
struct RankSteps {
  std::vector<double> compute_s, wait_s;
};

struct StragglerVerdict {
  int rank = -1;              // the straggler, -1: none
  double slow_share = 0;      // its share of steps slow by more than the threshold
  double excess = 0;          // its median compute over the others' median, minus 1
  double wait_share = 0;      // the others' wait beyond its own, as a share of their steps
  std::vector<double> rank_slow_share, rank_excess;  // every rank's figures of the first two
};

// A rank is slow in a step when its compute exceeds the median of the other ranks' compute in that step by
// more than `threshold` (0.2: 20%); it is named when slow in more than half the steps, and of several the
// one slow most often (then by its excess). Its wait share sums, over the steps, each other rank's wait beyond
// the straggler's own wait (the straggler waits only for the network), over their compute and wait. Fewer than
// two ranks, or no steps: no straggler. Every rank must list the same number of steps.
StragglerVerdict find_straggler(const std::vector<RankSteps>& ranks, double threshold);

// "straggler: rank 1 (node2) computed 48% above the others' median in 95% of steps; the other ranks spent 31%
// of their step waiting for it", or "straggler: none (no rank's compute was more than 20% above the others'
// median in most steps)". `hosts` names each rank's host (may be empty).
std::string straggler_line(const StragglerVerdict& verdict, double threshold, const std::vector<std::string>& hosts);

}  // namespace ft
