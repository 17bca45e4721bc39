// Rank 0's progress within an epoch: on a terminal one line rewritten in place (carriage return), else a
// plain line every output.progress_every_s seconds; both start with "progress:" and say the step, images/s,
// loss and the time left in the epoch and in the run.
#pragma once

#include <cstdint>
#include <string>

#include "monitor/timer.h"

namespace ft {

struct ProgressSetup {
  int epochs = 1;                    // train.epochs
  std::int64_t steps_per_epoch = 1;  // optimizer steps
  std::int64_t images_per_step = 1;  // over all ranks
  double every_s = 30;               // output.progress_every_s: plain lines' interval; 0 = no progress at all
  bool terminal = false;             // one line rewritten in place instead of plain lines
};

// Where the run is and what it measured in the epoch so far (this segment's part of it).
struct ProgressPoint {
  int epoch = 1;
  std::int64_t step = 0;          // optimizer steps of the epoch done
  std::int64_t steps_timed = 0;   // of those, the ones this segment ran (the clock's)
  double seconds = 0;             // host time of steps_timed
  double loss = 0;                // mean training loss of rank 0's batches of steps_timed
  double epoch_overhead_s = 0;    // evaluation and the like per epoch, as measured so far
};

// "progress: epoch 2/10 step 120/1875 (6%)  1234 img/s  loss 0.4567  ETA epoch 1m23s, run 15m10s"
std::string progress_text(const ProgressSetup& setup, const ProgressPoint& point);
// "42s", "3m05s", "1h02m"
std::string duration_text(double seconds);

class Progress {
 public:
  explicit Progress(const ProgressSetup& setup);
  ~Progress();  // erases a terminal line
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  // Whether a line is due now: the terminal line each second (every every_s seconds when that is shorter), a
  // plain line every every_s seconds.
  bool due() const;
  void show(const ProgressPoint& point);
  // Before another line is printed: erases the terminal line, restarts the plain lines' interval.
  void clear();

 private:
  ProgressSetup setup_;
  Stopwatch since_shown_;
  std::size_t shown_width_ = 0;  // characters of the terminal line now on screen
};

}  // namespace ft
