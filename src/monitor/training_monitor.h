// The trainer's view for people watching a run: rank 0's TensorBoard event file and progress line, fed
// by a few calls from the training loop. Device values are read only when a point or a line is due.
#pragma once

#include <ATen/Device.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "config/schema.h"
#include "monitor/step_windows.h"
#include "monitor/timer.h"
#include "results/run_record.h"

namespace ft {

class Progress;
class TensorBoardLog;

// What the trainer reads from the device when asked (a host synchronisation on GPUs).
struct StepReading {
  double loss_sum = 0;     // this rank's training loss x images of the epoch so far (this segment's steps)
  double lr = 0;           // the step's learning rate
  double comm_wait_s = 0;  // communication the training thread waited for since the segment began
  double loss_scale = 0;   // the dynamic loss scale (fp16); 0 when the run does not scale the loss
};

struct MonitorSetup {
  int rank = 0;
  at::Device device = at::kCPU;
  std::string checkpoint_path;          // <dir>/<stem>.ckpt: the event files go to <dir>/<stem>.tb ("" = none)
  std::int64_t steps_per_epoch = 1;
  std::int64_t images_per_step = 1;     // over all ranks
  std::int64_t rank_images_per_step = 1;
  std::int64_t start_step = 0;          // optimizer steps done before this segment
  std::string config_yaml;              // the segment's resolved config
  PhaseClock* clock = nullptr;          // this rank's phase clock: its steps' windows (step_windows.h)
};

class TrainingMonitor {
 public:
  // Ranks other than 0 get an object that does nothing.
  TrainingMonitor(const Config& config, const MonitorSetup& setup);
  ~TrainingMonitor();  // erases a progress line still on the terminal

  // The steps of `epoch` start, `first_step` of them already done (a resumed epoch).
  void begin_epoch(int epoch, std::int64_t first_step);
  // After optimizer step `step` of the epoch (1-based), `global_step` since the start of the run: a
  // TensorBoard point every output.tensorboard_every steps of the epoch, a progress line when due; `read` is
  // called only then. On every rank: the step's window of compute and wait, from the phase clock.
  void after_step(std::int64_t global_step, std::int64_t step, const std::function<StepReading()>& read);
  // The epoch's figures (global, and `rank_rows` for each rank) at `global_step`, before its line is printed.
  void end_epoch(std::int64_t global_step, const EpochRecord& record, const std::vector<RankEpochRecord>& rank_rows);
  // Before another line is printed mid-epoch: erases the progress line.
  void clear_line();
  // This rank's compute and wait per step (or window of steps) so far.
  const RankSteps& step_windows() const { return windows_.windows(); }

 private:
  void log_point(std::int64_t global_step, std::int64_t step, const StepReading& reading, double seconds);
  void show_progress(std::int64_t step, const StepReading& reading, double seconds);

  // The reading of the last TensorBoard point, the base of the next point's means.
  struct Window {
    std::int64_t global_step = 0, step = 0;
    double loss_sum = 0, seconds = 0, comm_wait_s = 0;
  };

  MonitorSetup setup_;
  int every_ = 0;
  std::unique_ptr<TensorBoardLog> log_;
  std::unique_ptr<Progress> progress_;
  int epoch_ = 0;
  std::int64_t first_step_ = 0;
  Stopwatch epoch_clock_;
  double last_step_s_ = 0;                 // epoch clock at the last step
  double overhead_s_ = 0;                  // evaluation and the like, summed over the epochs seen
  int overhead_epochs_ = 0;
  Window window_;
  StepWindows windows_;
};

}  // namespace ft
