// Resume: a thin owner of the checkpoint path and run fingerprint, so the trainer asks only "where do I
// start" and "save here"; the file format lives in checkpoint.cpp.
#include "train/resume.h"

#include <cstdio>
#include <utility>

#include "io/paths.h"
#include "runtime/world.h"
#include "train/rank_streams.h"

namespace ft {

Resume::Resume(std::string path, std::string fingerprint, const World& world, CheckpointedState state)
    : path_(std::move(path)), fingerprint_(std::move(fingerprint)), world_(world), state_(std::move(state)) {}

std::optional<TrainingPosition> saved_position(const std::string& path, const std::string& fingerprint) {
  if (path.empty() || !paths::exists(path)) return std::nullopt;
  return read_checkpoint_position(path, fingerprint);
}

TrainingPosition Resume::start() {
  if (path_.empty() || !paths::exists(path_)) return {};
  const TrainingPosition position = load_checkpoint(path_, fingerprint_, state_.network, state_.optimizer,
                                                    state_.scaler, state_.device, state_.extra, world_.rank(),
                                                    state_.seed);
  if (world_.rank() == 0) {
    std::printf("resuming from %s at epoch %d, step %lld\n", path_.c_str(), position.epoch,
                static_cast<long long>(position.step));
    std::fflush(stdout);
  }
  return position;
}

void Resume::save(const TrainingPosition& position) {
  if (path_.empty()) return;
  const std::vector<GeneratorState> generators = gather_generators(world_, state_.device);
  if (world_.rank() != 0) return;
  save_checkpoint(path_, fingerprint_, state_.network, state_.optimizer, state_.scaler, position, state_.device,
                  state_.extra, generators);
}

}  // namespace ft
