// Chrome-trace (Perfetto-loadable) timeline of a run: per-step phases and per-bucket communication
// phases, recorded per rank in memory and written by rank 0 as one JSON file at the end.
#pragma once

#include <chrono>
#include <mutex>
#include <string>
#include <vector>

namespace ft {

class World;

class Timeline {
 public:
  explicit Timeline(bool enabled) : enabled_(enabled), origin_(std::chrono::steady_clock::now()) {}
  bool enabled() const { return enabled_; }
  // Microseconds since the timeline's origin.
  double now_us() const;
  // A complete event; `track` becomes the trace's thread id (e.g. "compute", "comm").
  void record(const std::string& name, const std::string& track, double start_us, double end_us,
              const std::string& args_json = "");
  // Gathers every rank's events to rank 0, which writes `path` atomically. Collective.
  void write(const World& world, const std::string& path) const;

 private:
  struct Event {
    std::string name, track, args;
    double start, end;
  };
  bool enabled_;
  std::chrono::steady_clock::time_point origin_;
  mutable std::mutex mutex_;
  std::vector<Event> events_;
};

// Records [construction, destruction) as one event when the timeline is enabled.
class TimelineSpan {
 public:
  TimelineSpan(Timeline* timeline, std::string name, std::string track)
      : timeline_(timeline && timeline->enabled() ? timeline : nullptr), name_(std::move(name)),
        track_(std::move(track)), start_(timeline_ ? timeline_->now_us() : 0) {}
  ~TimelineSpan() {
    if (timeline_) timeline_->record(name_, track_, start_, timeline_->now_us());
  }
  TimelineSpan(const TimelineSpan&) = delete;
  TimelineSpan& operator=(const TimelineSpan&) = delete;

 private:
  Timeline* timeline_;
  std::string name_, track_;
  double start_;
};

}  // namespace ft
