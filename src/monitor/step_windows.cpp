// Step windows from the phase clock's running totals, gathered from every rank as packed doubles.
#include "monitor/step_windows.h"

#include <cstring>

#include "runtime/error.h"
#include "runtime/world.h"

namespace ft {
namespace {

std::string pack(const RankSteps& steps) {
  std::string bytes(2 * steps.compute_s.size() * sizeof(double), '\0');
  std::memcpy(bytes.data(), steps.compute_s.data(), steps.compute_s.size() * sizeof(double));
  std::memcpy(bytes.data() + steps.compute_s.size() * sizeof(double), steps.wait_s.data(),
              steps.wait_s.size() * sizeof(double));
  return bytes;
}

RankSteps unpack(const std::string& bytes, std::size_t windows, int rank, int own_rank) {
  FT_CHECK(bytes.size() == 2 * windows * sizeof(double), "rank ", rank, " sent ", bytes.size() / 16,
           " step windows, rank ", own_rank, " has ", windows);
  RankSteps steps;
  steps.compute_s.resize(windows);
  steps.wait_s.resize(windows);
  std::memcpy(steps.compute_s.data(), bytes.data(), windows * sizeof(double));
  std::memcpy(steps.wait_s.data(), bytes.data() + windows * sizeof(double), windows * sizeof(double));
  return steps;
}

}  // namespace

void StepWindows::after_step(PhaseClock& clock) {
  if (++since_ < every_) return;
  since_ = 0;
  const PhaseTimes& t = clock.totals();
  const double compute = t[Phase::kData] + t[Phase::kForward] + t[Phase::kBackward] + t[Phase::kOptimizer];
  windows_.compute_s.push_back(compute - compute_s_);
  windows_.wait_s.push_back(t[Phase::kCommWait] - wait_s_);
  compute_s_ = compute, wait_s_ = t[Phase::kCommWait];
  if (windows_.compute_s.size() >= kMostWindows) merge_pairs();
}

void StepWindows::merge_pairs() {
  RankSteps merged;
  for (std::size_t i = 0; i + 1 < windows_.compute_s.size(); i += 2) {
    merged.compute_s.push_back(windows_.compute_s[i] + windows_.compute_s[i + 1]);
    merged.wait_s.push_back(windows_.wait_s[i] + windows_.wait_s[i + 1]);
  }
  windows_ = merged;
  every_ *= 2;
}

StragglerVerdict record_straggler(const World& world, const RankSteps& mine, double threshold, RunSummary& summary,
                                  RankRecord& rank) {
  const auto gathered = world.allgather(pack(mine));
  std::vector<RankSteps> ranks;
  for (std::size_t r = 0; r < gathered.size(); ++r)
    ranks.push_back(unpack(gathered[r], mine.compute_s.size(), static_cast<int>(r), world.rank()));
  const StragglerVerdict v = find_straggler(ranks, threshold);
  summary.straggler_rank = v.rank;
  summary.straggler_slow_share = v.slow_share;
  summary.straggler_excess = v.excess;
  summary.straggler_wait_share = v.wait_share;
  summary.straggler_windows = static_cast<std::int64_t>(mine.compute_s.size());
  rank.slow_step_share = v.rank_slow_share[world.rank()];
  rank.compute_excess = v.rank_excess[world.rank()];
  return v;
}

}  // namespace ft
