// The engine's device clocks on stand-in events: a step's times are added only once the device passed all
// its events (both the last transfer's end and backward's end), the host never waits for the device (a step it
// ran ahead of keeps its slot and the pool grows, up to its bound), and a step that ended before recording
// its events is counted.
#include <gtest/gtest.h>

#include <memory>
#include <stdexcept>
#include <vector>

#include "engine/step_clocks.h"

namespace ft {
namespace {

// A device event: recorded at a device time, passed once the "device" gets there (or when waited for).
// elapsed_time throws unless both completed, as CUDA's does.
struct FakeEvent {
  struct State {
    bool done = false;
    double at_ms = 0;
    int waits = 0;
  };
  std::shared_ptr<State> state = std::make_shared<State>();

  bool query() const { return state->done; }
  void synchronize() const { ++state->waits, state->done = true; }
  float elapsed_time(const FakeEvent& later) const {
    if (!query() || !later.query()) throw std::runtime_error("Both events must be completed");
    return static_cast<float>(later.state->at_ms - state->at_ms);
  }
};

FakeEvent make_event() { return FakeEvent{}; }

// Records one step: its transfers of 1 ms each, back to back from t0, and backward's end at backward_ms;
// the flags say whether the device got past them yet.
void record_step(StepEvents<FakeEvent>& step, double t0, double backward_ms, bool transfers_passed,
                 bool backward_passed) {
  for (std::size_t b = 0; b < step.end.size(); ++b) {
    *step.start[b].state = {transfers_passed, t0 + b, 0};
    *step.end[b].state = {transfers_passed, t0 + b + 1, 0};
    ++step.transfers;
  }
  *step.backward_end.state = {backward_passed, backward_ms, 0};
  step.backward = true;
}

struct Totals {
  double transfer_s = 0, exposed_s = 0;
  std::int64_t untimed = 0;
};

Totals collected(StepClocks<FakeEvent>& clocks) {
  Totals t;
  clocks.collect(t.transfer_s, t.exposed_s, t.untimed);
  return t;
}

// Two steps the device has not passed (transfers done, backward's end still running) when the host begins a
// third: the pool grows, nothing is waited for, and each step's times are added once the device passed it.
TEST(StepClocks, AStepTheHostRanAheadOfKeepsItsSlotAndThePoolGrows) {
  StepClocks<FakeEvent> clocks(2, 2, make_event, 4);
  StepEvents<FakeEvent>& first = clocks.begin_step();
  record_step(first, 0, 1, /*transfers_passed=*/true, /*backward_passed=*/false);
  StepEvents<FakeEvent>& second = clocks.begin_step();
  record_step(second, 10, 11, true, false);
  ASSERT_NO_THROW(clocks.begin_step());
  EXPECT_EQ(clocks.slots(), 3u) << "a step's slot was taken while the device had not passed it";
  EXPECT_EQ(first.backward_end.state->waits + second.backward_end.state->waits, 0) << "the host waited";
  EXPECT_TRUE(first.pending && second.pending);
  Totals t = collected(clocks);
  EXPECT_EQ(t.transfer_s, 0) << "added before backward's end completed";
  second.backward_end.state->done = true;
  t = collected(clocks);
  EXPECT_NEAR(t.transfer_s, 2e-3, 1e-9) << "the second step (2 transfers of 1 ms) once passed";
  EXPECT_NEAR(t.exposed_s, 1e-3, 1e-9) << "backward ended at 11, the last transfer at 12";
  first.backward_end.state->done = true;
  t = collected(clocks);
  EXPECT_NEAR(t.transfer_s, 2e-3, 1e-9) << "the first step once passed";
  EXPECT_NEAR(t.exposed_s, 1e-3, 1e-9) << "backward ended at 1, the last transfer at 2";
  EXPECT_EQ(t.untimed, 0);
}

// A free slot is reused before the pool grows: exactly `depth` steps the device keeps up with need no more.
TEST(StepClocks, APassedStepsSlotIsReusedBeforeThePoolGrows) {
  StepClocks<FakeEvent> clocks(1, 2, make_event, 8);
  for (int i = 0; i < 10; ++i) record_step(clocks.begin_step(), 10.0 * i, 10.0 * i, true, true);
  EXPECT_EQ(clocks.slots(), 2u);
  EXPECT_NEAR(collected(clocks).transfer_s, 10e-3, 1e-9);
}

// At the pool's bound (4 slots) the host runs one step further: the oldest step's times are given up (counted
// untimed) and its slot reused, still without waiting; the other three are added once passed.
TEST(StepClocks, BeyondItsBoundTheOldestStepIsCountedUntimedNotWaitedFor) {
  StepClocks<FakeEvent> clocks(1, 2, make_event, 4);
  std::vector<StepEvents<FakeEvent>*> steps;
  for (int i = 0; i < 4; ++i) {
    steps.push_back(&clocks.begin_step());
    record_step(*steps.back(), 10.0 * i, 10.0 * i + 5, true, false);
  }
  StepEvents<FakeEvent>& fifth = clocks.begin_step();
  EXPECT_EQ(clocks.slots(), 4u);
  EXPECT_EQ(&fifth, steps[0]) << "not the oldest step's slot";
  for (const auto* step : steps) EXPECT_EQ(step->backward_end.state->waits, 0) << "the host waited";
  record_step(fifth, 40, 45, true, true);
  for (auto* step : steps) step->backward_end.state->done = true;
  const Totals t = collected(clocks);
  EXPECT_EQ(t.untimed, 1) << "the first step's times were not given up";
  EXPECT_NEAR(t.transfer_s, 4e-3, 1e-9) << "steps 2 to 5";
}

// collect() never waits: a step with an event still running stays pending, and is added once it passed.
TEST(StepClocks, AStepStillOnTheDeviceStaysPendingUntilItPassed) {
  StepClocks<FakeEvent> clocks(1, 4, make_event);
  StepEvents<FakeEvent>& step = clocks.begin_step();
  record_step(step, 0, 5, /*transfers_passed=*/true, /*backward_passed=*/false);
  Totals t = collected(clocks);
  EXPECT_EQ(t.transfer_s, 0) << "added before backward's end completed";
  EXPECT_TRUE(step.pending);
  EXPECT_EQ(step.backward_end.state->waits, 0) << "collect() waited on the device";
  step.backward_end.state->done = true;
  t = collected(clocks);
  EXPECT_NEAR(t.transfer_s, 1e-3, 1e-9);
  EXPECT_EQ(t.exposed_s, 0) << "backward ended after the transfer: nothing exposed";
  EXPECT_FALSE(step.pending);
}

// A step that failed before its transfers: counted as untimed when the next step begins, never dropped
// silently, and its slot's events (left from an earlier step) are not read as its times.
TEST(StepClocks, AStepThatEndedBeforeItsEventsIsCountedAndItsStaleEventsUnread) {
  StepClocks<FakeEvent> clocks(1, 2, make_event);
  StepEvents<FakeEvent>& first = clocks.begin_step();
  record_step(first, 0, 0, true, true);
  EXPECT_NEAR(collected(clocks).transfer_s, 1e-3, 1e-9);
  StepEvents<FakeEvent>& failed = clocks.begin_step();  // never records anything (an error)
  EXPECT_EQ(&failed, &first) << "the passed first step's slot is free again";
  EXPECT_EQ(collected(clocks).transfer_s, 0) << "the step in progress was taken for done from stale events";
  record_step(clocks.begin_step(), 20, 20, true, true);  // the failed step is counted as this one begins
  const Totals t = collected(clocks);
  EXPECT_EQ(t.untimed, 1);
  EXPECT_NEAR(t.transfer_s, 1e-3, 1e-9) << "only the third step's transfer";
}

}  // namespace
}  // namespace ft
