// The default training step: backward hands each gradient to the gradient engine, whose buckets are
// all-reduced while backward goes on; the optimizer steps once every bucket is back.
#pragma once

#include <memory>

#include "engine/powersgd.h"
#include "train/step.h"

namespace ft {

class OverlappedStep final : public TrainingStep {
 public:
  // `powersgd`: the engine's bucket reducer when distributed.compression is powersgd, else null.
  OverlappedStep(StepParts& parts, std::unique_ptr<GradientEngine> engine, std::shared_ptr<PowerSgd> powersgd = {});
  ~OverlappedStep() override;
  double comm_wait_s() override { return engine_->stats().wait_s - warm_up_.wait_s; }
  void summarise(RunSummary& summary, RankRecord& rank) override;
  // The engine's statistics count from here on.
  void forget_warm_up() override;
  // PowerSGD's warm-started factors and this rank's error feedback.
  StepState checkpointed_state() override;

 private:
  // PowerSGD learns which optimizer step the buckets belong to (compression starts at a step of the run).
  void before_forward(const StepAt& at, int /*micro*/) override {
    if (powersgd_) powersgd_->set_step(at.global_step);
  }
  void clear_gradients() override { engine_->clear_gradients(); }
  // The last micro-batch's backward lets the engine all-reduce; the others accumulate locally.
  void before_backward(bool last) override { engine_->prepare(last); }
  // Waits for the buckets still in flight; the reduced gradients are left in every .grad.
  void agree_gradients(EpochSums& /*sums*/) override { engine_->finish(); }

  std::unique_ptr<GradientEngine> engine_;
  std::shared_ptr<PowerSgd> powersgd_;
  EngineStats warm_up_;  // the engine's statistics when train.warmup_steps ended (none: zeros)
};

}  // namespace ft
