// A training run's TensorBoard event file on rank 0: a new file per segment in the run's folder, opened
// with a session start and the resolved config, then scalars flushed as they are logged.
#pragma once

#include <cstdint>
#include <exception>
#include <memory>
#include <string>
#include <vector>

#include "monitor/event_file.h"
#include "monitor/tensorboard_events.h"

namespace ft {

struct TensorBoardSetup {
  std::string folder;            // <output.dir>/<run>.tb
  std::int64_t start_step = 0;   // optimizer steps done before this segment: 0 on a fresh start
  bool overwrite = false;        // output.overwrite of a named run: an earlier run's event files may be removed
  std::string config_yaml;       // the segment's resolved config, logged as text
};

class TensorBoardLog {
 public:
  // A fresh start finds the folder empty: event files already there are an earlier run's that this one does
  // not continue, removed when `overwrite` and otherwise moved aside with the folder (<folder>.1, .2, ...) and
  // named in a note, so TensorBoard never draws two runs as one. A resumed segment adds its file beside the earlier
  // segments' and starts a session at the step after its checkpoint, so TensorBoard drops what a crashed
  // segment logged past that checkpoint. Never throws: a folder or file that cannot be written is a warning
  // and the log stays off (the results file and checkpoints are the run's record, not this view of it).
  explicit TensorBoardLog(const TensorBoardSetup& setup);
  ~TensorBoardLog();

  // Writes one summary of `values` at `step` and flushes it; a failed write turns the log off with a warning.
  void scalars(std::int64_t step, const std::vector<Scalar>& values);
  bool active() const { return file_ != nullptr; }
  std::string path() const { return file_ ? file_->path() : std::string(); }

 private:
  void open(const TensorBoardSetup& setup);
  void turn_off(const std::exception& e);
  std::unique_ptr<EventFile> file_;
};

// The step of a segment's session start and config text: 0 on a fresh start, else the step after the
// checkpoint it resumed from (the checkpoint's own step was logged by the segment that wrote it).
std::int64_t session_start_step(std::int64_t start_step);

}  // namespace ft
