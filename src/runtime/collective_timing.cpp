// Implementation of the collective timing helpers: a steady clock around each run, one barrier before
// it, one all-reduce of the median at the end.
#include "runtime/collective_timing.h"

#include <algorithm>
#include <chrono>

#include "runtime/error.h"
#include "runtime/world.h"

namespace ft {

double median(std::vector<double> values) {
  FT_CHECK(!values.empty(), "median of no values");
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

double median_over_ranks_s(const World& world, int untimed, int timed, const std::function<void()>& body) {
  std::vector<double> times;
  for (int i = 0; i < untimed + timed; ++i) {
    world.barrier();
    const auto start = std::chrono::steady_clock::now();
    body();
    if (i >= untimed) times.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  return world.allreduce_max(median(times));
}

}  // namespace ft
