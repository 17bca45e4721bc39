// A run's checkpoints seen from the training loop: where the run starts (the newest checkpoint of this run
// that verifies, else the beginning) and the saves on a stop signal, every N epochs or every N seconds.
#pragma once

#include <ATen/ATen.h>
#include <torch/optim/optimizer.h>

#include <string>
#include <utility>
#include <vector>

#include "models/network.h"
#include "monitor/timer.h"
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
};

// How the run's checkpoint files are kept and what a resume does with damaged ones.
struct CheckpointPolicy {
  int keep = 2;                  // train.keep_checkpoints: the newest files kept (train/checkpoint_files.h)
  bool discard_damaged = false;  // when every checkpoint is damaged: move them aside and start afresh
};

class Resume {
 public:
  // `path` "" disables checkpoints, else it names the newest; `fingerprint` identifies the run
  // (config/fingerprint.h).
  Resume(std::string path, std::string fingerprint, const World& world, CheckpointedState state,
         CheckpointPolicy policy = {});
  // Every rank: the position to continue from, restoring the state from the newest checkpoint that verifies
  // (rank 0 chooses it; each damaged newer one is reported and moved aside). Throws, leaving every file in
  // place, when checkpoints exist but none verifies, unless the policy discards them.
  TrainingPosition start();
  // Collective: every rank's random streams are gathered, then rank 0 writes the checkpoint (atomically,
  // read back and verified) and rotates it in as the newest.
  void save(const TrainingPosition& position);
  const std::string& path() const { return path_; }
  // Seconds since start() or the end of the last save().
  double seconds_since_save() const { return since_save_.seconds(); }

 private:
  std::string path_, fingerprint_;
  const World& world_;
  CheckpointedState state_;
  CheckpointPolicy policy_;
  Stopwatch since_save_;

  std::string choose(std::vector<std::pair<std::string, std::string>>& damaged);
};

}  // namespace ft
