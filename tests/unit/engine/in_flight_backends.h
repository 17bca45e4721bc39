// Stand-in backends whose all-reduces stay in flight "on the device" until polled, as NCCL's do, for the
// tests of which thread drives a backend's transfers in flight (plain and under ThreadSanitizer).
#pragma once

#include <atomic>
#include <chrono>
#include <cstring>
#include <deque>
#include <mutex>
#include <set>
#include <thread>

#include "comm/backend.h"
#include "runtime/error.h"
#include "test_world.h"

namespace ft::test {

// Records every thread that touches its in-flight state (under a lock, so any thread may); `stall_after`
// polls make it fail as a stalled NCCL collective does.
class InFlightBackend final : public Backend {
 public:
  explicit InFlightBackend(int stall_after = -1)
      : Backend(test::world(), "in-flight", 20), stall_after_(stall_after) {}
  bool uses_device_memory() const override { return false; }

  std::set<std::thread::id> threads() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return threads_;
  }
  int failures() const { return failures_; }

 private:
  void touch() {
    std::lock_guard<std::mutex> lock(mutex_);
    threads_.insert(std::this_thread::get_id());
  }
  void transfer_allreduce(void*, std::size_t, DType, void*) override {
    touch();
    ++in_flight_;
  }
  void transfer_in_flight(std::size_t) override {
    touch();
    if (stall_after_ >= 0 && ++polls_ > stall_after_) throw Error("stand-in transfer stalled");
    in_flight_ = 0;  // every poll finds them done
  }
  void on_failure() noexcept override {
    touch();
    ++failures_;
  }
  void transfer_broadcast(void*, std::size_t, int, void*) override {}
  void transfer_allgather(const void* in, void* out, std::size_t bytes, void*) override {
    std::memcpy(out, in, bytes);
  }
  void transfer_barrier() override {}

  mutable std::mutex mutex_;
  std::set<std::thread::id> threads_;
  int in_flight_ = 0, polls_ = 0, stall_after_;
  std::atomic<int> failures_{0};
};

// NCCL's shape: a communicator handle and a queue of transfers in flight, neither guarded, as NcclBackend
// keeps them, and a wait that blocks while the "device" works (`wait_ms`). Only one thread may own them:
// under ThreadSanitizer a second thread that polls, waits or aborts is a reported data race; in any build a
// touch from the thread that made the backend is counted.
class CommunicatorBackend final : public Backend {
 public:
  explicit CommunicatorBackend(int wait_ms = 100)
      : Backend(test::world(), "communicator", 20), maker_(std::this_thread::get_id()), wait_ms_(wait_ms) {}
  bool uses_device_memory() const override { return false; }
  int touches_by_maker() const { return touches_by_maker_; }

 private:
  void own() {
    if (std::this_thread::get_id() == maker_) ++touches_by_maker_;
    FT_REQUIRE(comm_ != nullptr, "the stand-in communicator was aborted");
  }
  void transfer_allreduce(void*, std::size_t, DType, void*) override {
    own();
    pending_.push_back(comm_->next_sequence++);
  }
  void transfer_in_flight(std::size_t keep) override {
    own();
    if (pending_.empty()) return;
    if (keep == kPollOnly) {
      pending_.pop_front();
      return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(wait_ms_));  // the device still sums
    while (pending_.size() > keep) pending_.pop_front();
  }
  void on_failure() noexcept override { comm_ = nullptr; }
  void transfer_broadcast(void*, std::size_t, int, void*) override {}
  void transfer_allgather(const void* in, void* out, std::size_t bytes, void*) override {
    std::memcpy(out, in, bytes);
  }
  void transfer_barrier() override {}

  struct Communicator {
    long next_sequence = 0;
  };
  Communicator communicator_;
  Communicator* comm_ = &communicator_;
  std::deque<long> pending_;
  const std::thread::id maker_;
  const int wait_ms_;
  std::atomic<int> touches_by_maker_{0};
};

}  // namespace ft::test
