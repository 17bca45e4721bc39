// The training loop of one rank: loads its data slice onto the device, builds the model, runs epochs
// of forward/backward with the gradient engine overlapping communication, evaluates, and judges.
#pragma once

#include <ATen/ATen.h>

#include <memory>
#include <vector>

#include "config/schema.h"
#include "data/shard_format.h"
#include "models/network.h"
#include "results/run_record.h"
#include "runtime/error.h"

namespace ft {

class World;
class Backend;
class Timeline;

struct TrainOutcome {
  std::vector<EpochRecord> epochs;  // global metrics, identical on every rank
  RunSummary summary;               // peak memory of this rank only; the caller reduces it
  RankRecord rank;                  // this rank's statistics
  ShardMeta data;                   // the training split's description
};

// Thrown after a checkpoint was written because a stop signal arrived; exit with kExitResumable.
class Interrupted : public Error {
 public:
  using Error::Error;
};

struct TrainerOptions {
  std::string checkpoint_path;  // "" = no checkpoints; else resumed from when present (the caller
                                // removes it once the results are safely written)
  Timeline* timeline = nullptr;
};

class Trainer {
 public:
  Trainer(const Config& config, const World& world, Backend& backend, at::Device device,
          TrainerOptions options = {});
  TrainOutcome run();
  // The trained network (for tests comparing parameters across runs).
  std::shared_ptr<Network> network() const { return network_; }

 private:
  const Config& config_;
  const World& world_;
  Backend& backend_;
  at::Device device_;
  TrainerOptions options_;
  Timeline* timeline_;
  std::shared_ptr<Network> network_;
};

}  // namespace ft
