// Device clocks of the gradient engine's steps: a ring of per-step events (each bucket's transfer and
// backward's end), a step's times added once the device passed all of them. Generic over the event (tests).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
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
};

// Event: query() (true once the device passed it), synchronize() (waits for it) and elapsed_time(later) in
// milliseconds (which throws unless both completed), as at::cuda::CUDAEvent has them. The ring lets the host
// run `depth` steps ahead of the device without losing a step's times.
template <class Event>
class StepClocks {
 public:
  StepClocks(std::size_t buckets, std::size_t depth, const std::function<Event()>& make) : buckets_(buckets) {
    ring_.resize(std::max<std::size_t>(depth, 1));
    for (StepEvents<Event>& step : ring_) {
      for (std::size_t b = 0; b < buckets; ++b) step.start.push_back(make()), step.end.push_back(make());
      step.backward_end = make();
    }
  }

  // The next step takes the oldest slot. A step still there (the host ran `depth` steps ahead) is first
  // waited for, both clocks' last events, and added.
  StepEvents<Event>& begin_step() {
    slot_ = (slot_ + 1) % ring_.size();
    StepEvents<Event>& step = ring_[slot_];
    if (step.pending) {
      if (recorded(step)) wait(step);
      add(step);
    }
    step.pending = true, step.transfers = 0, step.backward = false;
    return step;
  }
  StepEvents<Event>& current() { return ring_[slot_]; }

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
  static void wait(const StepEvents<Event>& step) {
    if (!step.end.empty()) step.end.back().synchronize();
    step.backward_end.synchronize();
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

  std::size_t buckets_;
  std::vector<StepEvents<Event>> ring_;
  std::size_t slot_ = 0;
  double transfer_s_ = 0, exposed_s_ = 0;
  std::int64_t untimed_ = 0;
};

}  // namespace ft
