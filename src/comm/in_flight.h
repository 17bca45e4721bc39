// Collectives in flight on a device stream: a queue of completion events, retired in order as they
// complete, whose oldest entry is held against the stall timeout. Generic over the event type (tests).
#pragma once

#include <chrono>
#include <deque>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace ft {

// Event: movable; query() is true once the device passed it. `make` creates an event when none is free.
template <class Event>
class InFlight {
 public:
  using Clock = std::chrono::steady_clock;

  // A collective just enqueued; `done` is recorded behind it on its stream.
  void push(Event done, std::string label) {
    std::lock_guard<std::mutex> lock(mutex_);
    queue_.push_back({std::move(done), std::move(label), Clock::now()});
  }

  // A reusable event from completed collectives, or a fresh one.
  template <class Make>
  Event take(Make&& make) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (free_.empty()) return make();
    Event e = std::move(free_.back());
    free_.pop_back();
    return e;
  }

  // Retires the completed collectives at the front. When one is still running, returns the seconds it
  // has been in flight and its label; {-1, ""} when none is.
  std::pair<double, std::string> retire() {
    std::lock_guard<std::mutex> lock(mutex_);
    while (!queue_.empty() && queue_.front().done.query()) {
      free_.push_back(std::move(queue_.front().done));
      queue_.pop_front();
    }
    if (queue_.empty()) return {-1.0, std::string()};
    const auto& oldest = queue_.front();
    return {std::chrono::duration<double>(Clock::now() - oldest.since).count(), oldest.label};
  }

  // Retires completed collectives until at most `keep` are left in flight (a `keep` above any queue polls
  // once). While one is running, each poll calls check(seconds the oldest has waited, its label), which
  // throws to give up (the stall timeout, a transport's error), then pause() before polling again.
  template <class Check, class Pause>
  void settle(std::size_t keep, Check&& check, Pause&& pause) {
    for (;;) {
      const auto [waited_s, label] = retire();
      if (waited_s < 0) return;
      check(waited_s, label);
      if (size() <= keep) return;
      pause();
    }
  }

  std::size_t size() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return queue_.size();
  }

  // Drops every entry (after an abort) and hands the events out for destruction.
  std::vector<Event> clear() {
    std::lock_guard<std::mutex> lock(mutex_);
    std::vector<Event> out = std::move(free_);
    free_.clear();
    for (auto& entry : queue_) out.push_back(std::move(entry.done));
    queue_.clear();
    return out;
  }

 private:
  struct Entry {
    Event done;
    std::string label;
    Clock::time_point since;
  };
  mutable std::mutex mutex_;
  std::deque<Entry> queue_;
  std::vector<Event> free_;
};

}  // namespace ft
