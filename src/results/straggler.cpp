// The straggler rule of straggler.h: per step a leave-one-out median of compute, counts of slow steps per
// rank, and the others' wait beyond the straggler's own.
#include "results/straggler.h"

#include <algorithm>
#include <cmath>

#include "runtime/collective_timing.h"
#include "runtime/error.h"

namespace ft {
namespace {

// The median of every rank's compute in step `s` but rank `r`'s (the lower middle of an even count).
double others_median(const std::vector<RankSteps>& ranks, std::size_t s, std::size_t r) {
  std::vector<double> others;
  for (std::size_t o = 0; o < ranks.size(); ++o)
    if (o != r) others.push_back(ranks[o].compute_s[s]);
  std::sort(others.begin(), others.end());
  return others[(others.size() - 1) / 2];
}

double wait_share(const std::vector<RankSteps>& ranks, std::size_t straggler) {
  double waited = 0, total = 0;
  for (std::size_t o = 0; o < ranks.size(); ++o) {
    if (o == straggler) continue;
    for (std::size_t s = 0; s < ranks[o].compute_s.size(); ++s) {
      waited += std::max(0.0, ranks[o].wait_s[s] - ranks[straggler].wait_s[s]);
      total += ranks[o].compute_s[s] + ranks[o].wait_s[s];
    }
  }
  return total > 0 ? waited / total : 0;
}

}  // namespace

StragglerVerdict find_straggler(const std::vector<RankSteps>& ranks, double threshold) {
  StragglerVerdict v;
  v.rank_slow_share.assign(ranks.size(), 0);
  v.rank_excess.assign(ranks.size(), 0);
  const std::size_t steps = ranks.empty() ? 0 : ranks.front().compute_s.size();
  for (const auto& r : ranks)
    FT_CHECK(r.compute_s.size() == steps && r.wait_s.size() == steps, "ranks listed different numbers of steps");
  if (ranks.size() < 2 || steps == 0) return v;
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    std::vector<double> ratios;
    int slow = 0;
    for (std::size_t s = 0; s < steps; ++s) {
      const double reference = others_median(ranks, s, r);
      if (reference <= 0) continue;
      ratios.push_back(ranks[r].compute_s[s] / reference - 1);
      slow += ranks[r].compute_s[s] > (1 + threshold) * reference;
    }
    v.rank_slow_share[r] = static_cast<double>(slow) / static_cast<double>(steps);
    v.rank_excess[r] = ratios.empty() ? 0 : median(ratios);
    const bool most = 2 * slow > static_cast<int>(steps);
    const bool worse = v.rank < 0 || v.rank_slow_share[r] > v.slow_share ||
                       (v.rank_slow_share[r] == v.slow_share && v.rank_excess[r] > v.excess);
    if (most && worse) v.rank = static_cast<int>(r), v.slow_share = v.rank_slow_share[r], v.excess = v.rank_excess[r];
  }
  if (v.rank >= 0) v.wait_share = wait_share(ranks, static_cast<std::size_t>(v.rank));
  return v;
}

std::string straggler_line(const StragglerVerdict& v, double threshold, const std::vector<std::string>& hosts) {
  const auto percent = [](double share) { return std::to_string(static_cast<long>(std::lround(100 * share))) + "%"; };
  if (v.rank < 0)
    return cat("straggler: none (no rank's compute was more than ", percent(threshold),
               " above the others' median in most steps)");
  const std::string host = static_cast<std::size_t>(v.rank) < hosts.size() ? cat(" (", hosts[v.rank], ")") : "";
  return cat("straggler: rank ", v.rank, host, " computed ", percent(v.excess), " above the others' median in ",
             percent(v.slow_share), " of steps; the other ranks spent ", percent(v.wait_share),
             " of their step waiting for it");
}

}  // namespace ft
