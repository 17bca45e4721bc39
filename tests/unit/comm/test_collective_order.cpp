// Tests of comm/collective_order: places entered strictly in the order they were taken, whatever the threads'
// timing, a wait bounded by the timeout, and an abandoned order that fails its waiters at once.
#include "comm/collective_order.h"

#include <gtest/gtest.h>

#include <chrono>
#include <mutex>
#include <thread>
#include <vector>

#include "runtime/error.h"

namespace ft {
namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Places 0..5 taken in order, handed to two threads in an order chosen so that the later places are ready
// first (the other thread sleeps before its earlier ones): the log still comes out 0..5.
TEST(CollectiveOrder, PlacesAreEnteredInTheOrderTheyWereTaken) {
  CollectiveOrder order(10);
  std::vector<std::uint64_t> places;
  for (int i = 0; i < 6; ++i) places.push_back(order.take());
  EXPECT_EQ(places, (std::vector<std::uint64_t>{0, 1, 2, 3, 4, 5}));
  std::mutex mutex;
  std::vector<std::uint64_t> log;
  auto run = [&](std::vector<std::uint64_t> mine, int sleep_ms) {
    for (const std::uint64_t place : mine) {
      std::this_thread::sleep_for(std::chrono::milliseconds(sleep_ms));
      const CollectiveTurn turn(&order, place, "a collective");
      const std::lock_guard<std::mutex> lock(mutex);
      log.push_back(place);
    }
  };
  std::thread slow(run, std::vector<std::uint64_t>{0, 2, 3}, 30);
  std::thread fast(run, std::vector<std::uint64_t>{1, 4, 5}, 0);
  slow.join();
  fast.join();
  EXPECT_EQ(log, (std::vector<std::uint64_t>{0, 1, 2, 3, 4, 5}));
}

TEST(CollectiveOrder, TheFirstPlaceAndAPlaceWhoseTurnCameDoNotWait) {
  CollectiveOrder order(0.05);
  const std::uint64_t first = order.take(), second = order.take();
  const auto start = std::chrono::steady_clock::now();
  { const CollectiveTurn turn(&order, first, "the first"); }
  { const CollectiveTurn turn(&order, second, "the second"); }
  EXPECT_LT(seconds_since(start), 0.04);
  const CollectiveTurn none(nullptr, 7, "none");  // no order: nothing to wait for
}

TEST(CollectiveOrder, AWaitBeyondTheTimeoutNamesThePlaceNeverEnqueued) {
  CollectiveOrder order(0.2);
  (void)order.take();
  const std::uint64_t second = order.take();
  const auto start = std::chrono::steady_clock::now();
  try {
    order.enter(second);
    FAIL() << "entered before place 0 was enqueued";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("collective 1 of this rank's device communicators waited 0.2 s for its "
                                         "turn: the one before it (place 0) was never enqueued"),
              std::string::npos)
        << e.what();
  }
  EXPECT_GE(seconds_since(start), 0.19);
}

// A waiter is woken when the place before it is left, not when its 30 s timeout runs out.
TEST(CollectiveOrder, LeavingAPlaceWakesTheNextOneAtOnce) {
  CollectiveOrder order(30);
  const std::uint64_t first = order.take(), second = order.take();
  bool entered = false;
  const auto start = std::chrono::steady_clock::now();
  std::thread waiter([&] {
    order.enter(second);
    entered = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  order.enter(first);
  order.leave();
  waiter.join();
  EXPECT_TRUE(entered);
  EXPECT_LT(seconds_since(start), 5.0);
}

TEST(CollectiveOrder, AnAbandonedOrderFailsItsWaitersAtOnce) {
  CollectiveOrder order(30);
  (void)order.take();
  const std::uint64_t second = order.take();
  std::string seen;
  const auto start = std::chrono::steady_clock::now();
  std::thread waiter([&] {
    try {
      order.enter(second);
    } catch (const Error& e) {
      seen = e.what();
    }
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  order.abandon("the all-reduce of bucket 0 failed");
  waiter.join();
  EXPECT_LT(seconds_since(start), 5.0);
  EXPECT_NE(seen.find("collective 1 of this rank's device communicators was not enqueued: the all-reduce of bucket 0 "
                      "failed"),
            std::string::npos)
      << seen;
  // Later waiters too, even one whose turn it would be.
  CollectiveOrder gone(30);
  gone.abandon("");
  EXPECT_THROW(gone.enter(gone.take()), Error);
}

// A collective that throws in its turn abandons the order before it hands the turn on: the next place fails
// naming it instead of going ahead of a broken communicator.
TEST(CollectiveOrder, ACollectiveThatThrowsInItsTurnAbandonsTheOrder) {
  CollectiveOrder order(30);
  const std::uint64_t first = order.take(), second = order.take();
  try {
    const CollectiveTurn turn(&order, first, "the all-reduce of bucket 0");
    throw Error("transfer failed");
  } catch (const Error&) {
  }
  try {
    order.enter(second);
    FAIL() << "the next place went ahead of a failed collective";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("was not enqueued: the all-reduce of bucket 0 failed"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace ft
