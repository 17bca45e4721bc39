// The order in which one rank enqueues the collectives of two communicators that share its device (the
// gradient engine's and synchronised BatchNorm's): places taken in the program's order, entered in turn.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <exception>
#include <string>
#include <utility>

namespace ft {

// NCCL runs a collective once every rank has enqueued it, and two communicators whose kernels are in flight
// together on one device, in orders that differ between ranks, can wait on each other for ever. The engine's
// communication thread and autograd's thread enqueue on two communicators; autograd's thread, whose order is
// the same on every rank, takes a place for each collective (a bucket when it becomes ready, a BatchNorm sum
// when it is issued), and each collective is enqueued only in its place's turn. (The NCCL backend then chains
// a rank's collectives on the device in the order they were enqueued.)
class CollectiveOrder {
 public:
  // `timeout_s`: how long enter() waits before it gives up (the stall timeout).
  explicit CollectiveOrder(double timeout_s) : timeout_s_(timeout_s) {}

  // The next place in line.
  std::uint64_t take();
  // Blocks until the collectives of every earlier place have been enqueued (leave()); throws ft::Error naming
  // the place after the timeout, or at once once the order was abandoned.
  void enter(std::uint64_t place);
  // The collective of the place entered last is enqueued: the next place's turn.
  void leave();
  // After a failure: every waiter, now and later, throws with `why` instead of waiting for a turn that may
  // never come.
  void abandon(const std::string& why);

 private:
  double timeout_s_;
  std::mutex mutex_;
  std::condition_variable turn_;
  std::uint64_t taken_ = 0, served_ = 0;
  std::string abandoned_;
};

// enter() on construction, leave() on destruction. A collective that throws in its turn abandons the order first
// ("`what` failed"), so that no later place waits for, or goes ahead of, a communicator that is now broken.
class CollectiveTurn {
 public:
  CollectiveTurn(CollectiveOrder* order, std::uint64_t place, std::string what)
      : order_(order), what_(std::move(what)), uncaught_(std::uncaught_exceptions()) {
    if (order_) order_->enter(place);
  }
  ~CollectiveTurn() {
    if (!order_) return;
    if (std::uncaught_exceptions() > uncaught_) order_->abandon(what_ + " failed");
    order_->leave();
  }
  CollectiveTurn(const CollectiveTurn&) = delete;
  CollectiveTurn& operator=(const CollectiveTurn&) = delete;

 private:
  CollectiveOrder* order_;
  std::string what_;
  int uncaught_;
};

}  // namespace ft
