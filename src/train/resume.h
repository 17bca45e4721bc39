// A run's checkpoint seen from the training loop: where the run starts (the checkpoint's position when
// one of this run exists, else the beginning) and the saves on a stop signal or every N epochs.
#pragma once

#include <ATen/ATen.h>
#include <torch/optim/optimizer.h>

#include <optional>
#include <string>
#include <vector>

#include "models/network.h"
#include "train/checkpoint.h"
#include "train/precision.h"

namespace ft {

class World;

// The live training state a checkpoint captures; references, owned by the trainer.
struct CheckpointedState {
  Network& network;
  torch::optim::Optimizer& optimizer;
  LossScaler& scaler;
  at::Device device;
  std::vector<at::Tensor> extra;  // e.g. lookahead's slow weights
  std::uint64_t seed = 0;         // train.seed: fresh random streams for ranks the checkpoint has none for
};

// The position and history of the run's checkpoint at `path`, without restoring anything; nullopt when
// there is none (or checkpoints are off). Every rank reads it, before the model is built.
std::optional<TrainingPosition> saved_position(const std::string& path, const std::string& fingerprint);

class Resume {
 public:
  // `path` "" disables checkpoints; `fingerprint` identifies the run (config/fingerprint.h).
  Resume(std::string path, std::string fingerprint, const World& world, CheckpointedState state);
  // Every rank: the position to continue from, restoring the state from the checkpoint when it exists.
  TrainingPosition start();
  // Collective: every rank's random streams are gathered, then rank 0 writes the checkpoint (atomically).
  void save(const TrainingPosition& position);
  const std::string& path() const { return path_; }

 private:
  std::string path_, fingerprint_;
  const World& world_;
  CheckpointedState state_;
};

}  // namespace ft
