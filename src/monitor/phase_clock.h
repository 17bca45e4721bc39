// Per-phase time of a rank's steps by the clock that sees the work: the host's steady clock on CPUs, and
// CUDA events on the compute stream on GPUs, where host clocks around asynchronous work time launches only.
#pragma once

#include <ATen/Device.h>

#include <deque>
#include <memory>
#include <optional>
#include <vector>

#include "monitor/timer.h"

namespace ft {

enum class PhaseClockKind { host, cuda_events };
const char* phase_clock_name(PhaseClockKind kind);  // "host" | "cuda_events", as results files record it

class PhaseClock {
 public:
  virtual ~PhaseClock() = default;
  // A phase starts now (on a GPU: when the compute stream reaches this point).
  virtual void begin() = 0;
  // The phase begun last ends now; its time is added to `phase`.
  virtual void end(Phase phase) = 0;
  // Every phase's seconds so far; on a GPU waits for the marks still pending.
  virtual const PhaseTimes& totals() = 0;
  virtual PhaseClockKind kind() const = 0;
};

// Host clock on a CPU device, CUDA events on a CUDA device.
std::unique_ptr<PhaseClock> make_phase_clock(const at::Device& device);

// A clock of device events, generic over the event type so that its bookkeeping is tested on the CPU.
// Event: default-constructible; record() marks the stream's position; query() is true once the stream
// passed it; seconds_to(const Event& later) waits for `later` and returns the time between the two.
// Completed pairs are added as they are seen and their events reused, so no step waits for the device.
template <class Event>
class EventPhaseClock final : public PhaseClock {
 public:
  explicit EventPhaseClock(PhaseClockKind kind) : kind_(kind) {}

  void begin() override {
    open_ = take();
    open_->record();
  }

  void end(Phase phase) override {
    Event stop = take();
    stop.record();
    pending_.push_back({phase, std::move(*open_), std::move(stop)});
    open_.reset();
    while (!pending_.empty() && pending_.front().stop.query()) resolve_front();
  }

  const PhaseTimes& totals() override {
    while (!pending_.empty()) resolve_front();
    return times_;
  }

  PhaseClockKind kind() const override { return kind_; }
  std::size_t pending() const { return pending_.size(); }
  std::size_t pooled() const { return pool_.size(); }

 private:
  struct Marks {
    Phase phase;
    Event start, stop;
  };

  Event take() {
    if (pool_.empty()) return Event();
    Event e = std::move(pool_.back());
    pool_.pop_back();
    return e;
  }

  void resolve_front() {
    Marks& m = pending_.front();
    times_.add(m.phase, m.start.seconds_to(m.stop));
    pool_.push_back(std::move(m.start));
    pool_.push_back(std::move(m.stop));
    pending_.pop_front();
  }

  PhaseClockKind kind_;
  std::optional<Event> open_;
  std::deque<Marks> pending_;
  std::vector<Event> pool_;
  PhaseTimes times_;
};

}  // namespace ft
