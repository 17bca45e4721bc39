// The reproducible step's hooks around the eager micro-batches: each one's random streams and BatchNorm set
// before its forward, its gradients and statistics kept after its backward, all summed exactly at the end.
#include "train/reproducible_step.h"

#include "runtime/world.h"

namespace ft {

ReproducibleStep::ReproducibleStep(StepParts& parts)
    : TrainingStep(parts),
      exact_(parts.network, parts.parameters, parts.config.train.accumulation_steps, parts.config.distributed.micro_batches,
            parts.world.rank(), parts.world.size(), parts.config.train.seed) {}

ReproducibleStep::~ReproducibleStep() = default;

void ReproducibleStep::before_forward(const StepAt& at, int micro) { exact_.begin_micro_batch(at.epoch, at.step, micro); }

void ReproducibleStep::after_backward(int micro, const at::Tensor& loss) {
  exact_.end_micro_batch(micro, loss * parts_.config.data.batch_size);
}

void ReproducibleStep::agree_gradients(EpochSums& sums) { sums.exact_loss += exact_.finish(parts_.world); }

double ReproducibleStep::epoch_loss_sum(const EpochSums& sums, double /*reduced*/) const {
  return sums.exact_loss.item<double>();
}

}  // namespace ft
