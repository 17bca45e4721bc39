// Each rank's compute and all-reduce wait step by step, read from its phase clock, and the verdict on a straggler
// from every rank's (results/straggler.h). Host clocks are read every step; device clocks every kDeviceEvery
// steps, where the trainer already waits for the device. Beyond kMostWindows, windows merge in pairs.
#pragma once

#include <cstdint>

#include "monitor/phase_clock.h"
#include "results/run_record.h"
#include "results/straggler.h"

namespace ft {

class World;

class StepWindows {
 public:
  static constexpr std::int64_t kDeviceEvery = 50;
  static constexpr std::size_t kMostWindows = 512;

  explicit StepWindows(std::int64_t every) : every_(every) {}
  // After each optimizer step: every `every` steps a window of the compute (data, forward, backward, optimizer)
  // and the wait for gradient communication since the last one.
  void after_step(PhaseClock& clock);
  const RankSteps& windows() const { return windows_; }
  std::int64_t every() const { return every_; }

 private:
  void merge_pairs();

  std::int64_t every_, since_ = 0;
  double compute_s_ = 0, wait_s_ = 0;  // the clock's totals at the last window
  RankSteps windows_;
};

// Collective: every rank's windows, the verdict at `threshold`, and its figures in the summary and in this rank's
// record. Every rank computes the same verdict.
StragglerVerdict record_straggler(const World& world, const RankSteps& mine, double threshold, RunSummary& summary,
                                  RankRecord& rank);

}  // namespace ft
