// The default training step: backward hands each gradient to the gradient engine, whose buckets are
// all-reduced while backward goes on; the optimizer steps once every bucket is back.
#pragma once

#include <memory>

#include "train/step.h"

namespace ft {

class OverlappedStep final : public TrainingStep {
 public:
  OverlappedStep(StepParts& parts, std::unique_ptr<GradientEngine> engine);
  ~OverlappedStep() override;
  double comm_wait_s() override { return engine_->stats().wait_s; }
  void summarise(RunSummary& summary, RankRecord& rank) override;

 private:
  void clear_gradients() override { engine_->clear_gradients(); }
  // The last micro-batch's backward lets the engine all-reduce; the others accumulate locally.
  void before_backward(bool last) override { engine_->prepare(last); }
  // Waits for the buckets still in flight; the reduced gradients are left in every .grad.
  void agree_gradients(EpochSums& /*sums*/) override { engine_->finish(); }

  std::unique_ptr<GradientEngine> engine_;
};

}  // namespace ft
