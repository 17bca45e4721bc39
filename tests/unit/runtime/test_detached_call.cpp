// Tests of runtime/detached_call.h: the call starts at once on its own thread, a bounded wait gives up while
// it runs and returns once it ends, and what the call throws reaches the waiter.
#include "runtime/detached_call.h"

#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <memory>
#include <stdexcept>

namespace ft {
namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

TEST(DetachedCall, StartsAtOnceAndIsWaitedForWithABound) {
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  const auto start = std::chrono::steady_clock::now();
  DetachedCall call([released] { released.wait(); });
  EXPECT_LT(seconds_since(start), 1.0) << "constructing the call waited for the work";
  EXPECT_TRUE(call.started());
  EXPECT_FALSE(call.wait(0.05)) << "the work is still blocked";
  release.set_value();
  EXPECT_TRUE(call.wait(30));
}

TEST(DetachedCall, ItsErrorReachesTheWaiter) {
  DetachedCall call([] { throw std::runtime_error("abort failed"); });
  EXPECT_THROW(call.wait(30), std::runtime_error);
}

TEST(DetachedCall, OutlivedByWorkThatNeverEnds) {
  auto never = std::make_shared<std::promise<void>>();
  {
    DetachedCall call([released = never->get_future().share()] { released.wait(); });
    EXPECT_FALSE(call.wait(0.01));
  }  // destroyed without waiting for the work
  never->set_value();
}

TEST(DetachedCall, NotStartedByDefault) { EXPECT_FALSE(DetachedCall().started()); }

}  // namespace
}  // namespace ft
