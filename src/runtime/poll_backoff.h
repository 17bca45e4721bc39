// Polite waiting for an operation that completes asynchronously (an MPI request, a CUDA event): poll,
// yield the core between polls, and after a short spin window sleep with growing pauses, up to a deadline.
#pragma once

#include <algorithm>
#include <chrono>
#include <thread>

namespace ft {

// Usage: `PollBackoff wait(timeout_s); while (!done()) { if (wait.expired()) stall(); wait.pause(); }`.
// Polling keeps MPI progressing (each MPI_Test moves data), so for `spin` after the start, and after
// each sign of progress the caller reports, a wait only yields, which costs nothing when other ranks
// share the core; after that the pauses double from 20 us to 1 ms, so a rank stuck behind a
// straggler uses a few percent of a core instead of all of it. The deadline is fixed at the start.
class PollBackoff {
 public:
  using Clock = std::chrono::steady_clock;
  // How long a wait yields before it sleeps, unless told otherwise.
  static constexpr std::chrono::microseconds kSpin = std::chrono::milliseconds(20);

  explicit PollBackoff(double timeout_s, std::chrono::microseconds spin = kSpin)
      : start_(Clock::now()),
        deadline_(start_ + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(timeout_s))),
        spin_until_(start_ + spin),
        spin_(spin) {}

  bool expired() const { return Clock::now() >= deadline_; }

  double elapsed_s() const { return std::chrono::duration<double>(Clock::now() - start_).count(); }

  // Part of the operation completed: data is flowing, so go back to yielding between polls.
  void progressed() {
    spin_until_ = Clock::now() + spin_;
    sleep_ = kMinSleep;
  }

  void pause() {
    const auto now = Clock::now();
    if (now < spin_until_) {
      std::this_thread::yield();
      return;
    }
    std::this_thread::sleep_for(sleep_);
    sleep_ = std::min(sleep_ * 2, kMaxSleep);
  }

 private:
  static constexpr std::chrono::microseconds kMinSleep{20}, kMaxSleep{1000};
  Clock::time_point start_, deadline_, spin_until_;
  std::chrono::microseconds spin_;
  std::chrono::microseconds sleep_ = kMinSleep;
};

}  // namespace ft
