// The training loop of one rank: loads its data slice onto the device, builds the model and the one kind of
// step its config asks for, runs the epochs step by step, evaluates, checkpoints and judges.
#pragma once

#include <ATen/ATen.h>

#include <memory>
#include <utility>
#include <vector>

#include "config/schema.h"
#include "shard/shard_format.h"
#include "models/network.h"
#include "monitor/timer.h"
#include "results/run_record.h"
#include "checkpoint/checkpoint.h"
#include "device/graphed_step.h"
#include "train/segment_plan.h"
#include "train/step.h"
#include "runtime/error.h"

namespace ft {

class World;
class Backend;
class Timeline;

struct TrainOutcome {
  std::vector<EpochRecord> epochs;  // global metrics, identical on every rank
  std::vector<RankEpochRecord> rank_epochs;  // every rank's own metrics per evaluated epoch, on every rank
  std::vector<SegmentRecord> segments;       // the run's segments, this process's last
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
  std::string checkpoint_path;  // "" = no checkpoints; else the newest, resumed from when present (the
                                // caller removes the run's checkpoints once the results are safely written)
  bool discard_damaged_checkpoints = false;  // every checkpoint damaged: start afresh instead of an error
  Timeline* timeline = nullptr;
  std::string started_at;       // UTC start of this process's segment, ISO 8601
  // train.cuda_graphs' recording: empty for a CUDA graph; a test's stand-in replays the step on the CPU.
  GraphedStep::RecordingFactory record_graphs;
  // model.sync_batchnorm's communicator on several ranks (a backend of the run's kind, not the engine's); null:
  // the trainer makes its own.
  Backend* norm_backend = nullptr;
};

class Trainer {
 public:
  Trainer(const Config& config, const World& world, Backend& backend, at::Device device,
          TrainerOptions options = {});
  ~Trainer();
  TrainOutcome run();
  // The trained network (for tests comparing parameters across runs).
  std::shared_ptr<Network> network() const { return network_; }

 private:
  struct State;  // what run() builds before the first step (trainer.cpp)

  void plan_segment();
  void build_replica();
  void make_step();
  void plan_steps();
  void warm_up_before_clocks(const TrainingPosition& start);
  void run_epoch(int epoch, const TrainingPosition& start, EpochRecord& record);
  void agree_on_flags(int epoch, std::int64_t step, EpochSums& sums);
  TrainingPosition mid_epoch_position(int epoch, std::int64_t step, EpochSums& sums, bool loss_read);
  void evaluate_into(EpochRecord& record);
  void summarise(const Stopwatch& training, std::size_t resumed_epochs);
  TrainingPosition position_at(int epoch, std::int64_t step, double loss_sum, std::int64_t correct);

  const Config& configured_;  // as the user gave it: the run's fingerprint
  Config config_;             // what this segment trains with (segment_config: the elastic batch rule)
  const World& world_;
  Backend& backend_;
  at::Device device_;
  TrainerOptions options_;
  Timeline* timeline_;
  std::shared_ptr<Network> network_;
  std::unique_ptr<State> state_;
  TrainOutcome out_;
  SegmentPlan plan_;
  Stopwatch segment_clock_;
  std::int64_t global_step_ = 0;
};

}  // namespace ft
