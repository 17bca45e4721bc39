// Places in line for the collectives of two communicators on one device, and the wait for one's turn, bounded
// by the stall timeout and cut short by a failure elsewhere.
#include "comm/collective_order.h"

#include <chrono>

#include "runtime/error.h"

namespace ft {

std::uint64_t CollectiveOrder::take() {
  const std::lock_guard<std::mutex> lock(mutex_);
  return taken_++;
}

void CollectiveOrder::enter(std::uint64_t place) {
  std::unique_lock<std::mutex> lock(mutex_);
  const bool turn = turn_.wait_for(lock, std::chrono::duration<double>(timeout_s_),
                                   [&] { return served_ == place || !abandoned_.empty(); });
  FT_REQUIRE(abandoned_.empty(), "collective ", place, " of this rank's device communicators was not enqueued: ",
             abandoned_);
  FT_REQUIRE(turn, "collective ", place, " of this rank's device communicators waited ", timeout_s_,
             " s for its turn: the one before it (place ", served_, ") was never enqueued");
}

void CollectiveOrder::leave() {
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    ++served_;
  }
  turn_.notify_all();
}

void CollectiveOrder::abandon(const std::string& why) {
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    if (abandoned_.empty()) abandoned_ = why.empty() ? "an earlier collective failed" : why;
  }
  turn_.notify_all();
}

}  // namespace ft
