// The live event file of a run: its folder made ready (an earlier run's files removed or set aside on a
// fresh start), the session start, the config text, and scalars written through as they come.
#include "monitor/tensorboard_log.h"

#include <cstdio>

#include "io/paths.h"
#include "runtime/error.h"

namespace ft {
namespace {

// A fresh start under a name whose folder holds event files: they are another run's.
void clear_earlier_run(const std::string& folder, bool overwrite) {
  const auto earlier = event_files_in(folder);
  if (earlier.empty()) return;
  if (overwrite) {
    for (const auto& file : earlier) paths::remove(file);
    return;
  }
  std::string aside;
  for (int n = 1; aside.empty() || paths::exists(aside); ++n) aside = cat(folder, ".", n);
  paths::rename(folder, aside);
  std::printf("note: %s held the TensorBoard files of an earlier run that this one does not continue: moved to %s "
              "(with output.name set, output.overwrite: true removes them instead)\n", folder.c_str(), aside.c_str());
  std::fflush(stdout);
}

}  // namespace

std::int64_t session_start_step(std::int64_t start_step) { return start_step == 0 ? 0 : start_step + 1; }

TensorBoardLog::TensorBoardLog(const TensorBoardSetup& setup) {
  try {
    open(setup);
  } catch (const std::exception& e) {
    turn_off(e);
  }
}

TensorBoardLog::~TensorBoardLog() = default;

void TensorBoardLog::open(const TensorBoardSetup& setup) {
  if (setup.start_step == 0) clear_earlier_run(setup.folder, setup.overwrite);
  const double now = wall_seconds();
  file_ = std::make_unique<EventFile>(setup.folder, now);
  const std::int64_t step = session_start_step(setup.start_step);
  file_->write(session_start_event(now, step));
  file_->write(text_event(now, step, "config", "```yaml\n" + setup.config_yaml + "```\n"));
  file_->flush();
}

void TensorBoardLog::scalars(std::int64_t step, const std::vector<Scalar>& values) {
  if (!file_ || values.empty()) return;
  try {
    file_->write(scalars_event(wall_seconds(), step, values));
    file_->flush();
  } catch (const std::exception& e) {
    turn_off(e);
  }
}

void TensorBoardLog::turn_off(const std::exception& e) {
  file_.reset();
  std::fprintf(stderr, "warning: %s; TensorBoard logging stops, training goes on\n", e.what());
  std::fflush(stderr);
}

}  // namespace ft
