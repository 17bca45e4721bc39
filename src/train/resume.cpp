// Resume: a thin owner of the checkpoint path and run fingerprint, so the trainer asks only "where do I
// start" and "save here"; the file format lives in checkpoint.cpp.
#include "train/resume.h"

#include <cstdio>
#include <utility>

#include "io/paths.h"

namespace ft {

Resume::Resume(std::string path, std::string fingerprint, int rank, CheckpointedState state)
    : path_(std::move(path)), fingerprint_(std::move(fingerprint)), rank_(rank), state_(std::move(state)) {}

TrainingPosition Resume::start() {
  if (path_.empty() || !paths::exists(path_)) return {};
  const TrainingPosition position = load_checkpoint(path_, fingerprint_, state_.network, state_.optimizer,
                                                    state_.scaler, state_.device, state_.extra);
  if (rank_ == 0) {
    std::printf("resuming from %s at epoch %d, step %lld\n", path_.c_str(), position.epoch,
                static_cast<long long>(position.step));
    std::fflush(stdout);
  }
  return position;
}

void Resume::save(const TrainingPosition& position) {
  if (path_.empty() || rank_ != 0) return;
  save_checkpoint(path_, fingerprint_, state_.network, state_.optimizer, state_.scaler, position, state_.device,
                  state_.extra);
}

}  // namespace ft
