// What one optimizer step of training is, whatever its kind: gather the batch, forward and backward over its
// micro-batches, bring the gradients to agreement across ranks, step the optimizer, count loss and hits.
#pragma once

#include <ATen/ATen.h>

#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "config/schema.h"
#include "data/dataset.h"
#include "engine/engine.h"
#include "models/network.h"
#include "monitor/phase_clock.h"
#include "results/run_record.h"
#include "optim/fused_step.h"
#include "optim/lookahead.h"
#include "optim/optimizer.h"
#include "optim/precision.h"
#include "optim/scheduler.h"
#include "train/step_test_aids.h"

namespace ft {

class World;
class Backend;
class Timeline;

// Where a step stands: the epoch (1-based), the step within it and the optimizer steps done before it.
struct StepAt {
  int epoch = 1;
  std::int64_t step = 0;
  std::int64_t global_step = 0;
};

// One epoch's train loss sum, correct count and first non-finite step, kept on the device; and on rank 0 of
// a resumed epoch, the sums over all ranks before the stop, which count towards the global figures only.
struct EpochSums {
  at::Tensor loss_sum, correct, first_bad;
  double carried_loss = 0;
  std::int64_t carried_correct = 0;
  // distributed.reproducible: the exact loss sum over all ranks, the same on every rank, starting from the
  // interrupted epoch's sum so that it adds up in the uninterrupted run's order.
  at::Tensor exact_loss;
};

// What every kind of step works with: the run's settings, the replica and its optimizer, the training data
// and the clocks. The trainer builds it once; the step it makes keeps a reference.
struct StepParts {
  const Config& config;
  const World& world;
  Backend& backend;
  Network& network;
  at::Device device;
  Timeline* timeline = nullptr;
  CollectiveOrder* collective_order = nullptr;  // with model.sync_batchnorm over NCCL: the engine's buckets' order
  DeviceDataset* train = nullptr;
  AugmentParams* train_params = nullptr;
  PhaseClock* clock = nullptr;
  at::ScalarType dtype = at::kFloat, param_dtype = at::kFloat, amp_dtype = at::kFloat;
  std::vector<at::Tensor> parameters;  // trainable: all-reduced and optimised
  std::vector<ParameterGroup> groups;
  std::unique_ptr<torch::optim::Optimizer> optimizer;
  std::unique_ptr<FusedStep> fused;  // the optimizer's step as fused kernels (optimizer.implementation)
  std::unique_ptr<LossScaler> scaler;
  std::unique_ptr<LearningRateSchedule> schedule;
  std::unique_ptr<Lookahead> lookahead;
};

// Training state a kind of step keeps beyond the network and optimizer, which checkpoints carry: tensors the
// same on every rank (`shared`), and this rank's own (`own`), updated in place on a resume.
struct StepState {
  std::vector<at::Tensor> shared, own;
};

// One kind of step. run() is the same for every kind (the test aids, the learning rate of the step, the
// step itself, lookahead's pull); compute() is the kind's own: how gradients come to agree across ranks.
class TrainingStep {
 public:
  explicit TrainingStep(StepParts& parts);
  virtual ~TrainingStep();
  TrainingStep(const TrainingStep&) = delete;
  TrainingStep& operator=(const TrainingStep&) = delete;

  // One optimizer step on batch `at.step` of the epoch's order `indices`; its loss and correct count join
  // `sums` on the device.
  void run(const StepAt& at, const at::Tensor& indices, EpochSums& sums);
  // Before the host reads device state: whatever the step left in flight is complete (or the stall timeout
  // ends the run, naming the ranks).
  virtual void settle() {}
  // Communication the training thread waited for so far (the monitor's reading).
  virtual double comm_wait_s() { return 0; }
  // The epoch's training loss sum over all ranks, from the one the loop reduced (`reduced`).
  virtual double epoch_loss_sum(const EpochSums& sums, double reduced) const;
  // What the step's kind records of the run: its communication, its graphs, the optimizer steps it skipped.
  virtual void summarise(RunSummary& summary, RankRecord& rank);
  // The state a checkpoint must carry for the step to continue as it would have (none by default).
  virtual StepState checkpointed_state() { return {}; }
  // The learning rate of the last step.
  double lr() const { return lr_; }
  // fp16 steps skipped so far, those decided on the device moved into the count (a device read); a resumed
  // run counts on from its checkpoint's `before`.
  std::int64_t skipped_steps();
  void count_skipped_from(std::int64_t before) { skipped_count_ = skipped_from_ = before; }
  // After train.warmup_steps, whose state was put back: what their steps added to the step's own counts is
  // forgotten (skipped steps; the kinds' communication statistics and graph replays). A captured graph is kept.
  virtual void forget_warm_up();
  StepParts& parts() { return parts_; }

 protected:
  // The kind's step. By default eager: gradients cleared, the micro-batches, agree_gradients() timed as the
  // communication wait, then the optimizer step; a kind that replays its step overrides the whole.
  virtual void compute(const StepAt& at, const at::Tensor& indices, EpochSums& sums);
  // The eager step's hooks: before its first micro-batch, around each one, and after the last backward, when
  // the gradients (and the step's loss, where the kind sums it exactly) come to agree across ranks.
  virtual void clear_gradients() {}
  virtual void before_forward(const StepAt& /*at*/, int /*micro*/) {}
  virtual void before_backward(bool /*last*/) {}
  virtual void after_backward(int /*micro*/, const at::Tensor& /*loss*/) {}
  virtual void agree_gradients(EpochSums& /*sums*/) {}
  // Batch `slot` of the epoch's order, gathered and augmented on the device (the data phase).
  std::pair<at::Tensor, at::Tensor> micro_batch(int epoch, std::int64_t slot, const at::Tensor& indices);
  // Forward under the precision's autocast and the (label-smoothed) mean loss; returns loss and logits.
  std::pair<at::Tensor, at::Tensor> forward_loss(const at::Tensor& x, const at::Tensor& y);
  // A batch's mean loss and correct count into the epoch's sums, and the first non-finite loss's step.
  void count_batch(const at::Tensor& loss, const at::Tensor& correct, std::int64_t global_step, EpochSums& sums);
  // The (possibly skipped) optimizer step and the loss scale's update.
  void optimizer_step();

  StepParts& parts_;

 private:
  // The micro-batches of the eager step: each gathered, forward and loss counted, backward of its share.
  void micro_batches(const StepAt& at, const at::Tensor& indices, EpochSums& sums);

  StepTestAids aids_;
  at::Tensor skipped_;  // fp16 steps the fused step skipped on the device, not yet counted on the host
  std::int64_t skipped_count_ = 0, skipped_from_ = 0;
  double lr_ = 0;
};

}  // namespace ft
