// Timing a collective the same way on every rank: runs started from a barrier, the median of the timed
// ones, and the slowest rank's figure, so that every rank takes the same decision from it.
#pragma once

#include <functional>
#include <vector>

namespace ft {

class World;

// The middle value (the upper one of an even count); throws on an empty list.
double median(std::vector<double> values);

// Collective over world. Runs `body` `untimed` times, then `timed` times, each after a barrier; returns
// the median seconds of the timed runs, the maximum over ranks.
double median_over_ranks_s(const World& world, int untimed, int timed, const std::function<void()>& body);

}  // namespace ft
