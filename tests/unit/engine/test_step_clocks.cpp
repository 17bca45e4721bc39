// The engine's device clocks on stand-in events: a step's times are added only once the device passed all
// its events (both the last transfer's end and backward's end), a step the host ran ahead of is waited for on
// both, a step still on the device stays pending, and one that ended before recording its events is counted.
#include <gtest/gtest.h>

#include <memory>
#include <stdexcept>

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

// The transfers done, backward's end still running when the host comes round to the slot again: both are
// waited for before the times are read (waiting for the transfers alone made elapsed_time throw).
TEST(StepClocks, AStepTheHostRanAheadOfIsWaitedForOnBothClocks) {
  StepClocks<FakeEvent> clocks(2, 2, make_event);
  StepEvents<FakeEvent>& first = clocks.begin_step();
  record_step(first, 0, 1, /*transfers_passed=*/true, /*backward_passed=*/false);
  record_step(clocks.begin_step(), 10, 11, true, true);
  ASSERT_NO_THROW(clocks.begin_step()) << "the first step's slot is reused";
  EXPECT_EQ(first.backward_end.state->waits, 1) << "backward's end was not waited for";
  const Totals t = collected(clocks);
  EXPECT_NEAR(t.transfer_s, 4e-3, 1e-9) << "2 steps x 2 transfers of 1 ms";
  EXPECT_NEAR(t.exposed_s, 2e-3, 1e-9) << "backward ended at 1 and 11, the last transfers at 2 and 12";
  EXPECT_EQ(t.untimed, 0);
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

// A step that failed before its transfers: counted as untimed when its slot comes round, never dropped
// silently, and its slot's events (left from an earlier step) are not read as its times.
TEST(StepClocks, AStepThatEndedBeforeItsEventsIsCountedAndItsStaleEventsUnread) {
  StepClocks<FakeEvent> clocks(1, 2, make_event);
  record_step(clocks.begin_step(), 0, 0, true, true);  // slot 1
  EXPECT_NEAR(collected(clocks).transfer_s, 1e-3, 1e-9);
  clocks.begin_step();  // slot 0: never records anything (an error)
  StepEvents<FakeEvent>& reused = clocks.begin_step();  // slot 1 again: its events are the first step's
  EXPECT_EQ(collected(clocks).transfer_s, 0) << "the step in progress was taken for done from stale events";
  record_step(reused, 20, 20, true, true);
  clocks.begin_step();  // slot 0 comes round: the failed step is counted
  const Totals t = collected(clocks);
  EXPECT_EQ(t.untimed, 1);
  EXPECT_NEAR(t.transfer_s, 1e-3, 1e-9) << "only the third step's transfer";
}

}  // namespace
}  // namespace ft
