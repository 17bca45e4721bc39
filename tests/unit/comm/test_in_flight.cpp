// The queue of collectives in flight on a device stream, on stand-in events: completed ones retire in
// order and their events are reused, the oldest running one reports its wait and label (held against the
// stall timeout), settle() waits until few enough are left, and clear() hands every event back.
#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "comm/in_flight.h"

namespace ft {
namespace {

struct FakeEvent {
  std::shared_ptr<bool> done = std::make_shared<bool>(false);
  int id = 0;
  bool query() const { return *done; }
};

TEST(InFlight, CompletedCollectivesRetireInOrderAndTheirEventsAreReused) {
  InFlight<FakeEvent> queue;
  int made = 0;
  const auto make = [&] { return FakeEvent{std::make_shared<bool>(false), ++made}; };
  FakeEvent a = queue.take(make), b = queue.take(make);
  queue.push(a, "bucket 0");
  queue.push(b, "bucket 1");
  EXPECT_EQ(queue.retire().second, "bucket 0");
  *b.done = true;  // a later one finished first: the older still holds the queue
  EXPECT_EQ(queue.size(), 2u);
  EXPECT_EQ(queue.retire().second, "bucket 0");
  *a.done = true;
  EXPECT_EQ(queue.retire().first, -1.0) << "both completed, nothing in flight";
  EXPECT_EQ(queue.size(), 0u);
  const FakeEvent reused = queue.take(make);
  EXPECT_EQ(made, 2) << "a completed event is reused, not created";
  EXPECT_TRUE(reused.id == 1 || reused.id == 2);
}

TEST(InFlight, TheOldestRunningCollectiveReportsHowLongItWaited) {
  InFlight<FakeEvent> queue;
  queue.push(FakeEvent{}, "bucket 3 of step 7 (4.0 MiB)");
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  const auto [waited, label] = queue.retire();
  EXPECT_GE(waited, 0.025);
  EXPECT_EQ(label, "bucket 3 of step 7 (4.0 MiB)");
  queue.push(FakeEvent{}, "bucket 4");
  EXPECT_EQ(queue.clear().size(), 2u) << "clear() hands out every event for destruction";
  EXPECT_EQ(queue.retire().first, -1.0);
}

// Three steps' all-reduces in flight, the device finishing one per pause: settling to one left waits
// exactly for the two oldest, holding each against the check on the way.
TEST(InFlight, SettleWaitsUntilAtMostKeepAreLeft) {
  InFlight<FakeEvent> queue;
  std::vector<FakeEvent> steps(3);
  for (std::size_t i = 0; i < steps.size(); ++i) queue.push(steps[i], "step " + std::to_string(i));
  std::vector<std::string> checked;
  int pauses = 0;
  queue.settle(
      1, [&](double, const std::string& label) { checked.push_back(label); },
      [&] { *steps[pauses++].done = true; });
  EXPECT_EQ(queue.size(), 1u);
  EXPECT_EQ(pauses, 2);
  EXPECT_EQ(checked, (std::vector<std::string>{"step 0", "step 1", "step 2"}));
  queue.settle(SIZE_MAX, [&](double, const std::string&) { checked.push_back("polled"); },
               [&] { ADD_FAILURE() << "a poll must not wait"; });
  EXPECT_EQ(checked.back(), "polled");
  *steps[2].done = true;
  queue.settle(0, [&](double, const std::string&) { ADD_FAILURE() << "nothing runs: no check"; },
               [&] { ADD_FAILURE() << "nothing runs: no wait"; });
  EXPECT_EQ(queue.size(), 0u);
}

// The check gives up (a stall): settle stops waiting at once and leaves the queue as it was.
TEST(InFlight, SettleStopsWhenTheCheckGivesUp) {
  InFlight<FakeEvent> queue;
  queue.push(FakeEvent{}, "all-reduce (4.0 MiB)");
  queue.push(FakeEvent{}, "all-reduce (4.0 MiB)");
  int polls = 0;
  const auto check = [&](double, const std::string& label) {
    if (++polls == 3) throw std::runtime_error(label + " stalled");
  };
  EXPECT_THROW(queue.settle(0, check, [] {}), std::runtime_error);
  EXPECT_EQ(polls, 3);
  EXPECT_EQ(queue.size(), 2u);
}

}  // namespace
}  // namespace ft
