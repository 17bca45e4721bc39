// A run's checkpoints seen from the training loop: where the run starts (the newest checkpoint of this run
// that verifies, else the beginning) and the saves on a stop signal, every N epochs or every N seconds.
#pragma once

#include <ATen/ATen.h>
#include <torch/optim/optimizer.h>

#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "models/network.h"
#include "monitor/timer.h"
#include "checkpoint/checkpoint.h"
#include "optim/precision.h"

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
  std::function<void()> before_save;  // brings state kept elsewhere (fused steps' counts) into the optimizer
  // This rank's own state (PowerSGD's error feedback): every rank's is stored; a resume on another number of
  // ranks gives each rank the saved ranks' mean (checkpoint.h).
  std::vector<at::Tensor> rank_state;
};

// How the run's checkpoint files are kept and what a resume does with damaged ones.
struct CheckpointPolicy {
  int keep = 2;                  // train.keep_checkpoints: the newest files kept (train/checkpoint_files.h)
  bool discard_damaged = false;  // when every checkpoint is damaged: move them aside and start afresh
};

// The checkpoint file a run resumes from.
struct ResumeSource {
  std::string path;  // "" = start afresh
  std::vector<std::pair<std::string, std::string>> damaged;  // rank 0: the newer files that did not verify, and why
};

// Collective: rank 0 takes the newest of the checkpoint files of `base` (the newest's name; "" = checkpoints
// off) that verifies, warning of each damaged newer one, and every rank receives its choice. When files
// exist but none verifies, every rank throws a SharedError naming each file and what is wrong, leaving them
// in place, unless the policy discards them: then rank 0 warns and moves them aside, and the run starts afresh.
ResumeSource choose_resume_source(const std::string& base, const World& world, const CheckpointPolicy& policy);

// Collective: the position and history of the checkpoint at `path` (choose_resume_source's choice),
// without restoring anything; nullopt when there is none. Rank 0 reads it first, and a checkpoint of
// another run (a fingerprint that differs) is a SharedError on every rank; then the other ranks read it.
std::optional<TrainingPosition> saved_position(const std::string& path, const std::string& fingerprint,
                                               const World& world);

class Resume {
 public:
  // `path` "" disables checkpoints, else it names the newest; `fingerprint` identifies the run
  // (config/fingerprint.h); `source` is the file start() resumes from (choose_resume_source).
  Resume(std::string path, std::string fingerprint, const World& world, CheckpointedState state,
         CheckpointPolicy policy, ResumeSource source);
  // Every rank: the position to continue from, restoring the state from the source when there is one; rank 0
  // then moves the damaged newer files aside, out of the rotation.
  TrainingPosition start();
  // Collective: the state is checked finite on every rank (a SharedError naming the tensor otherwise: no
  // file is written), every rank's random streams and own state are gathered, then rank 0 writes the checkpoint
  // (atomically, read back and verified) and rotates it in as the newest.
  void save(const TrainingPosition& position);
  const std::string& path() const { return path_; }
  // Seconds since start() or the end of the last save().
  double seconds_since_save() const { return since_save_.seconds(); }

 private:
  std::string path_, fingerprint_;
  const World& world_;
  CheckpointedState state_;
  CheckpointPolicy policy_;
  ResumeSource source_;
  Stopwatch since_save_;
};

}  // namespace ft
