// distributed.reproducible's training step: each micro-batch of the global batch gets its own dropout stream
// and BatchNorm statistics, and their gradients, statistics and losses are summed exactly over all ranks.
#pragma once

#include <memory>

#include "train/exact_micro_batches.h"
#include "train/step.h"

namespace ft {

class ReproducibleStep final : public TrainingStep {
 public:
  explicit ReproducibleStep(StepParts& parts);
  ~ReproducibleStep() override;
  // The exact sum over all ranks, in the uninterrupted run's order: the same bits on any number of ranks.
  double epoch_loss_sum(const EpochSums& sums, double reduced) const override;

 private:
  void before_forward(const StepAt& at, int micro) override;
  void after_backward(int micro, const at::Tensor& loss) override;
  void agree_gradients(EpochSums& sums) override;

  ExactMicroBatches exact_;
};

}  // namespace ft
