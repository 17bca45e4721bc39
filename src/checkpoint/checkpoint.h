// Training checkpoints: model, optimizer and loss-scaler state, RNG state, position (epoch, step and the
// place in the epoch's global sample order) and the history so far, independent of the number of ranks.
#pragma once

#include <ATen/ATen.h>
#include <torch/optim/optimizer.h>

#include <string>
#include <vector>

#include "models/network.h"
#include "results/run_record.h"
#include "optim/rank_streams.h"

namespace ft {

class LossScaler;

struct TrainingPosition {
  int epoch = 1;                 // epoch to continue (1-based)
  std::int64_t step = 0;         // optimizer steps of that epoch already done
  std::int64_t sample = 0;       // images of that epoch's global sample order already trained on
  std::int64_t reference_batch = 0;  // the first segment's global batch (0: none yet, a fresh run)
  std::int64_t global_step = 0;  // optimizer steps since the start
  double loss_sum = 0;           // partial train metrics of the interrupted epoch
  std::int64_t correct = 0;
  std::int64_t skipped_steps = 0;
  std::vector<EpochRecord> history;
  std::vector<RankEpochRecord> rank_history;  // every rank's own figures of the evaluated epochs so far
  std::vector<SegmentRecord> segments;        // the run's segments so far, the saving one last
  std::string folder;  // read back: the absolute folder the checkpoint was written in ("" before it was stored)
};

// `fingerprint` identifies the run (resolved config without train.epochs); a mismatch on load is an error.
// `extra`: further training state (e.g. lookahead's slow weights), saved and restored in place.
// `rank_generators`: every rank's random streams in rank order (default: this process's, as rank 0's);
// load_checkpoint restores those of `rank`; a rank the checkpoint has no stream for (the run grew) gets a
// fresh stream of (seed, rank, segment).
// `rank_state`: every rank's own state tensors (PowerSGD's error feedback), rank_state[r][i] rank r's tensor i.
// load_checkpoint restores this rank's, `own`, in place: rank `rank`'s when the checkpoint was written by `ranks`
// ranks; otherwise each tensor becomes the mean of the saved ranks' (the mean over the ranks stays the same).
void save_checkpoint(const std::string& path, const std::string& fingerprint, Network& network,
                     torch::optim::Optimizer& optimizer, const LossScaler& scaler, const TrainingPosition& position,
                     const at::Device& device, const std::vector<at::Tensor>& extra = {},
                     const std::vector<GeneratorState>& rank_generators = {},
                     const std::vector<std::vector<at::Tensor>>& rank_state = {});
TrainingPosition load_checkpoint(const std::string& path, const std::string& fingerprint, Network& network,
                                 torch::optim::Optimizer& optimizer, LossScaler& scaler, const at::Device& device,
                                 const std::vector<at::Tensor>& extra = {}, int rank = 0, std::uint64_t seed = 0,
                                 const std::vector<at::Tensor>& own = {}, int ranks = 1);
// The position and history alone (no model), for planning the batch before the model is restored.
TrainingPosition read_checkpoint_position(const std::string& path, const std::string& fingerprint);

}  // namespace ft
