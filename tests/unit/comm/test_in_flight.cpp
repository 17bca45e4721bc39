// The queue of collectives in flight on a device stream, on stand-in events: completed ones retire in
// order and their events are reused, the oldest running one reports how long it has waited and its label
// (what the NCCL backend holds against the stall timeout), and clear() hands every event back.
#include <gtest/gtest.h>

#include <memory>
#include <thread>

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

}  // namespace
}  // namespace ft
