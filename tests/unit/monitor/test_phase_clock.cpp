// The device phase clock's bookkeeping, on stand-in events whose stream position and completion the test
// controls: phases add the time between their marks, completed marks are added without waiting and their
// events reused, and totals() waits for the rest. The host clock times CPU work.
#include <gtest/gtest.h>

#include <thread>

#include "monitor/phase_clock.h"

namespace ft {
namespace {

// A stream the test advances by hand: events record the time at which work queued so far would finish.
struct FakeStream {
  double queued_until = 0;  // seconds of work queued
  double done_until = 0;    // seconds of work the device has finished
  int waits = 0;            // blocking waits asked for
};
FakeStream stream;

struct PhaseFakeEvent {
  double at = -1;
  void record() { at = stream.queued_until; }
  bool query() const { return at <= stream.done_until; }
  double seconds_to(const PhaseFakeEvent& later) const {
    if (!later.query()) {
      ++stream.waits;
      stream.done_until = later.at;
    }
    return later.at - at;
  }
};

TEST(PhaseClock, DevicePhasesAddTheStreamTimeBetweenTheirMarks) {
  stream = FakeStream{};
  EventPhaseClock<PhaseFakeEvent> clock(PhaseClockKind::cuda_events);
  for (int step = 0; step < 3; ++step) {
    clock.begin();
    stream.queued_until += 0.5;  // forward kernels queued: launching took no host time at all
    clock.end(Phase::kForward);
    clock.begin();
    stream.queued_until += 1.25;
    clock.end(Phase::kBackward);
  }
  EXPECT_EQ(clock.pending(), 6u) << "nothing completed yet, so nothing may be added";
  stream.done_until = 1.75;  // the first step ran on the device
  clock.begin();
  stream.queued_until += 0.25;
  clock.end(Phase::kCommWait);
  EXPECT_EQ(clock.pending(), 5u) << "the first step's two phases are added without waiting";
  EXPECT_EQ(clock.pooled(), 4u) << "and their events reused";
  EXPECT_EQ(stream.waits, 0);
  const PhaseTimes& t = clock.totals();
  EXPECT_DOUBLE_EQ(t[Phase::kForward], 1.5);
  EXPECT_DOUBLE_EQ(t[Phase::kBackward], 3.75);
  EXPECT_DOUBLE_EQ(t[Phase::kCommWait], 0.25);
  EXPECT_EQ(clock.pending(), 0u);
  EXPECT_GE(stream.waits, 1) << "totals() waits for the marks still pending";
  EXPECT_STREQ(phase_clock_name(clock.kind()), "cuda_events");
}

TEST(PhaseClock, HostClockTimesCpuWork) {
  const auto clock = make_phase_clock(at::Device(at::kCPU));
  EXPECT_EQ(clock->kind(), PhaseClockKind::host);
  clock->begin();
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  clock->end(Phase::kOptimizer);
  EXPECT_GE(clock->totals()[Phase::kOptimizer], 0.015);
  EXPECT_EQ(clock->totals()[Phase::kData], 0.0);
  EXPECT_STREQ(phase_clock_name(clock->kind()), "host");
}

}  // namespace
}  // namespace ft
