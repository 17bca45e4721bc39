// Device clocks of the gradient engine's steps: a pool of per-step events (each bucket's transfer and
// backward's end), a step's times added once the device passed all of them. Generic over the event (tests).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <vector>

namespace ft {

// One step's events: each bucket's transfer on the communication stream, backward's end on the compute
// stream, and what this step recorded of them (a slot's events stay created from its earlier steps).
template <class Event>
struct StepEvents {
  std::vector<Event> start, end;
  Event backward_end;
  std::size_t transfers = 0;  // buckets whose start and end this step recorded
  bool backward = false;      // whether this step recorded backward_end
  bool pending = false;       // begun and not yet added
  std::uint64_t begun = 0;    // the step's number, for the oldest pending step
};

// Event: query() (true once the device passed it) and elapsed_time(later) in milliseconds (which throws
// unless both completed), as at::cuda::CUDAEvent has them. The host never waits for an event: a step the
// device has not passed stays pending in its slot, and a host that runs further ahead than the pool's `depth`
// gets new slots, up to `max_depth`; beyond that the oldest step's times are given up (counted untimed) and its
// slot reused. Waiting there would be a device synchronisation inside the step, which the sync check cannot see.
template <class Event>
class StepClocks {
 public:
  StepClocks(std::size_t buckets, std::size_t depth, const std::function<Event()>& make, std::size_t max_depth = 0)
      : buckets_(buckets), max_depth_(std::max({depth, max_depth, std::size_t{1}})), make_(make) {
    for (std::size_t i = 0; i < std::max<std::size_t>(depth, 1); ++i) add_slot();
  }

  // The step that begins takes a free slot. Every earlier step is added first if the device passed it (or if
  // it ended before recording its events: counted, untimed); the others stay pending.
  StepEvents<Event>& begin_step() {
    for (StepEvents<Event>& step : ring_)
      if (step.pending && (!recorded(step) || passed(step))) add(step);
    slot_ = free_slot();
    StepEvents<Event>& step = ring_[slot_];
    step.pending = true, step.transfers = 0, step.backward = false, step.begun = ++begun_;
    return step;
  }
  StepEvents<Event>& current() { return ring_[slot_]; }
  // Slots made so far (depth, or more while the host ran ahead).
  std::size_t slots() const { return ring_.size(); }

  // Adds every step the device has passed; a step still running (or the one in progress) stays pending.
  void collect(double& transfer_s, double& exposed_s, std::int64_t& untimed_steps) {
    for (StepEvents<Event>& step : ring_)
      if (step.pending && recorded(step) && passed(step)) add(step);
    transfer_s += transfer_s_, exposed_s += exposed_s_, untimed_steps += untimed_;
    transfer_s_ = exposed_s_ = 0, untimed_ = 0;
  }

 private:
  bool recorded(const StepEvents<Event>& step) const { return step.backward && step.transfers == buckets_; }
  static bool passed(const StepEvents<Event>& step) {
    return step.backward_end.query() && (step.end.empty() || step.end.back().query());
  }

  void add_slot() {
    StepEvents<Event>& step = ring_.emplace_back();
    for (std::size_t b = 0; b < buckets_; ++b) step.start.push_back(make_()), step.end.push_back(make_());
    step.backward_end = make_();
  }

  // A slot no step holds; a new one while the pool may grow; else the oldest pending step's, its times given up.
  std::size_t free_slot() {
    for (std::size_t i = 0; i < ring_.size(); ++i)
      if (!ring_[i].pending) return i;
    if (ring_.size() < max_depth_) {
      add_slot();
      return ring_.size() - 1;
    }
    const auto oldest = std::min_element(ring_.begin(), ring_.end(), [](const auto& a, const auto& b) {
      return a.begun < b.begun;
    });
    oldest->pending = false;
    ++untimed_;
    return static_cast<std::size_t>(oldest - ring_.begin());
  }

  // One step's times (the communication stream runs its buckets in order: the last bucket's end is when the
  // compute stream may go on). A step that ended before recording its events (an error) is counted, untimed.
  void add(StepEvents<Event>& step) {
    step.pending = false;
    if (!recorded(step)) {
      ++untimed_;
      return;
    }
    for (std::size_t b = 0; b < buckets_; ++b) transfer_s_ += step.start[b].elapsed_time(step.end[b]) / 1e3;
    if (buckets_ > 0) exposed_s_ += std::max(0.0f, step.backward_end.elapsed_time(step.end.back())) / 1e3;
  }

  std::size_t buckets_, max_depth_;
  std::function<Event()> make_;
  std::deque<StepEvents<Event>> ring_;  // a deque: slots keep their address as the pool grows
  std::size_t slot_ = 0;
  std::uint64_t begun_ = 0;
  double transfer_s_ = 0, exposed_s_ = 0;
  std::int64_t untimed_ = 0;
};

}  // namespace ft
