// Wall-clock timing helpers: a steady_clock stopwatch and per-phase accumulators for the step breakdown
// (data, forward, backward, communication wait, optimizer) that each rank reports.
#pragma once

#include <array>
#include <chrono>
#include <string>

namespace ft {

class Stopwatch {
 public:
  Stopwatch() : start_(std::chrono::steady_clock::now()) {}
  void reset() { start_ = std::chrono::steady_clock::now(); }
  double seconds() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  }

 private:
  std::chrono::steady_clock::time_point start_;
};

enum class Phase { kData, kForward, kBackward, kCommWait, kOptimizer, kEval, kCount };
constexpr std::size_t kPhaseCount = static_cast<std::size_t>(Phase::kCount);
const char* phase_name(Phase phase);

// Seconds spent per phase; add() after synchronising the device so GPU time is attributed correctly.
struct PhaseTimes {
  std::array<double, kPhaseCount> seconds{};
  void add(Phase phase, double s) { seconds[static_cast<std::size_t>(phase)] += s; }
  double operator[](Phase phase) const { return seconds[static_cast<std::size_t>(phase)]; }
};

}  // namespace ft
