// Rank 0's per-step and per-epoch figures turned into TensorBoard points and progress lines: the cadence,
// the means over the steps since the last point, and the memory figures of each epoch.
#include "monitor/training_monitor.h"

#include "io/paths.h"
#include "monitor/epoch_scalars.h"
#include "monitor/memory.h"
#include "monitor/progress.h"
#include "monitor/tensorboard_log.h"
#include "monitor/terminal.h"

namespace ft {
namespace {

std::string tensorboard_folder(const std::string& checkpoint_path) {
  return paths::join(paths::parent(checkpoint_path), paths::stem(checkpoint_path) + ".tb");
}

// output.overwrite replaces an earlier run's files of the same output.name; without a name the folder is
// named after the config's digest, which runs of one config share, so their files are only ever moved aside.
bool overwrites(const Config& config) { return config.output.overwrite && !config.output.name.empty(); }

}  // namespace

TrainingMonitor::TrainingMonitor(const Config& config, const MonitorSetup& setup)
    : setup_(setup), every_(config.output.tensorboard_every),
      windows_(setup.device.is_cuda() ? StepWindows::kDeviceEvery : 1) {
  window_.global_step = setup.start_step;
  if (setup.rank != 0) return;
  if (config.output.tensorboard && !setup.checkpoint_path.empty()) {
    const TensorBoardSetup tensorboard{tensorboard_folder(setup.checkpoint_path), setup.start_step, overwrites(config),
                                       setup.config_yaml};
    log_ = std::make_unique<TensorBoardLog>(tensorboard);
  }
  if (config.output.progress_every_s > 0)
    progress_ = std::make_unique<Progress>(ProgressSetup{config.train.epochs, setup.steps_per_epoch,
                                                         setup.images_per_step, config.output.progress_every_s,
                                                         stdout_is_terminal()});
}

TrainingMonitor::~TrainingMonitor() = default;

void TrainingMonitor::begin_epoch(int epoch, std::int64_t first_step) {
  epoch_ = epoch;
  first_step_ = first_step;
  epoch_clock_.reset();
  last_step_s_ = 0;
  window_.step = first_step;
  window_.loss_sum = 0;
  window_.seconds = 0;
}

void TrainingMonitor::after_step(std::int64_t global_step, std::int64_t step,
                                 const std::function<StepReading()>& read) {
  if (setup_.clock) windows_.after_step(*setup_.clock);
  if (setup_.rank != 0) return;
  last_step_s_ = epoch_clock_.seconds();
  const bool point = log_ && log_->active() && every_ > 0 && step % every_ == 0;
  const bool line = progress_ && progress_->due();
  if (!point && !line) return;
  const StepReading reading = read();
  const double seconds = epoch_clock_.seconds();  // after the read: the device has finished the step
  if (point) log_point(global_step, step, reading, seconds);
  if (line) show_progress(step, reading, seconds);
}

// Means over the steps since the last point: rank 0's training loss, global images/s, exposed
// communication per step.
void TrainingMonitor::log_point(std::int64_t global_step, std::int64_t step, const StepReading& r, double seconds) {
  const auto steps = static_cast<double>(step - window_.step);
  const auto global_steps = static_cast<double>(global_step - window_.global_step);
  if (steps <= 0 || global_steps <= 0) return;
  const double rank_images = steps * static_cast<double>(setup_.rank_images_per_step);
  const double images = steps * static_cast<double>(setup_.images_per_step);
  std::vector<Scalar> values{
      {"train/loss", (r.loss_sum - window_.loss_sum) / rank_images},
      {"train/lr", r.lr},
      {"train/images_per_s", images / std::max(1e-9, seconds - window_.seconds)},
      {"train/comm_exposed_ms", 1000 * (r.comm_wait_s - window_.comm_wait_s) / global_steps}};
  if (r.loss_scale > 0) values.push_back({"train/loss_scale", r.loss_scale});
  log_->scalars(global_step, values);
  window_ = {global_step, step, r.loss_sum, seconds, r.comm_wait_s};
}

void TrainingMonitor::show_progress(std::int64_t step, const StepReading& r, double seconds) {
  const std::int64_t timed = step - first_step_;
  ProgressPoint p;
  p.epoch = epoch_;
  p.step = step;
  p.steps_timed = timed;
  p.seconds = seconds;
  p.loss = timed > 0 ? r.loss_sum / static_cast<double>(timed * setup_.rank_images_per_step) : 0;
  p.epoch_overhead_s = overhead_epochs_ > 0 ? overhead_s_ / overhead_epochs_ : 0;
  progress_->show(p);
}

void TrainingMonitor::end_epoch(std::int64_t global_step, const EpochRecord& record,
                                const std::vector<RankEpochRecord>& rank_rows) {
  if (setup_.rank != 0) return;
  overhead_s_ += std::max(0.0, epoch_clock_.seconds() - last_step_s_);
  ++overhead_epochs_;
  clear_line();
  if (!log_) return;
  auto values = epoch_scalars(record);
  for (auto& v : rank_scalars(rank_rows, record.epoch)) values.push_back(std::move(v));
  for (auto& v : memory_scalars(static_cast<double>(peak_memory_bytes(setup_.device)),
                                static_cast<double>(peak_allocated_bytes(setup_.device))))
    values.push_back(std::move(v));
  log_->scalars(global_step, values);
}

void TrainingMonitor::clear_line() {
  if (progress_) progress_->clear();
}

}  // namespace ft
