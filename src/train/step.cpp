// What every kind of training step shares: the order of one step's parts, and the parts themselves that do
// not depend on how gradients come to agree (batch, forward and loss, the epoch's counts, the optimizer).
#include "train/step.h"

#include <cmath>
#include <tuple>

#include "comm/timeline.h"
#include "runtime/world.h"
#include "optim/fused_step.h"

namespace ft {
namespace {

// The index of an image draw in the augmentation's random streams: an epoch holds fewer than 2^40 draws,
// and within it draws are numbered in global batch order (slot by slot, rank by rank), so a draw's
// augmentation does not depend on which rank makes it.
std::int64_t draw_position(int epoch, std::int64_t slot, std::int64_t batch, int rank, int ranks) {
  return (static_cast<std::int64_t>(epoch) << 40) + slot * batch * ranks + static_cast<std::int64_t>(rank) * batch;
}

}  // namespace

TrainingStep::TrainingStep(StepParts& parts)
    : parts_(parts), aids_(parts.world.rank()), skipped_(at::zeros({1}, at::TensorOptions().device(parts.device).dtype(at::kFloat))) {}

TrainingStep::~TrainingStep() = default;

void TrainingStep::run(const StepAt& at, const at::Tensor& indices, EpochSums& sums) {
  auto& p = parts_;
  aids_.before_step(at.global_step, p.world.rank(), p.backend, p.device);
  const StepSyncCheck no_host_sync = aids_.watch(p.device, at.global_step);
  lr_ = p.schedule->at(at.global_step);
  set_learning_rate(*p.optimizer, p.groups, *p.schedule, at.global_step, at.epoch);
  compute(at, indices, sums);
  p.clock->begin();
  if (p.lookahead) p.lookahead->after_step(at.global_step + 1);
  aids_.after_step(at.global_step + 1, p.network, *p.optimizer, sums.loss_sum);
  p.clock->end(Phase::kOptimizer);
}

double TrainingStep::epoch_loss_sum(const EpochSums&, double reduced) const { return reduced; }

void TrainingStep::summarise(RunSummary& summary, RankRecord&) { summary.skipped_steps = skipped_steps(); }

void TrainingStep::forget_warm_up() {
  skipped_.zero_();
  skipped_count_ = skipped_from_;
}

std::int64_t TrainingStep::skipped_steps() {
  skipped_count_ += std::llround(skipped_.item<double>());
  skipped_.zero_();
  return skipped_count_;
}

std::pair<at::Tensor, at::Tensor> TrainingStep::micro_batch(int epoch, std::int64_t slot, const at::Tensor& indices) {
  auto& p = parts_;
  const std::int64_t batch = p.config.data.batch_size;
  p.clock->begin();
  const auto rows = indices.narrow(0, slot * batch, batch);
  auto xy = p.train->batch(rows, *p.train_params, draw_position(epoch, slot, batch, p.world.rank(), p.world.size()),
                           p.param_dtype, p.config.precision.channels_last);
  p.clock->end(Phase::kData);
  return {std::move(xy.first), std::move(xy.second)};
}

std::pair<at::Tensor, at::Tensor> TrainingStep::forward_loss(const at::Tensor& x, const at::Tensor& y) {
  auto& p = parts_;
  AutocastScope autocast(p.device, p.amp_dtype);
  at::Tensor logits = p.network.forward(x);
  at::Tensor loss = at::cross_entropy_loss(logits.to(p.param_dtype), y, {}, at::Reduction::Mean, -100,
                                           p.config.regularization.label_smoothing);
  return {std::move(loss), std::move(logits)};
}

void TrainingStep::compute(const StepAt& at, const at::Tensor& indices, EpochSums& sums) {
  auto& p = parts_;
  clear_gradients();
  micro_batches(at, indices, sums);
  p.clock->begin();
  agree_gradients(sums);
  p.clock->end(Phase::kCommWait);
  p.clock->begin();
  {
    const TimelineSpan span(p.timeline, "optimizer", "compute");
    optimizer_step();
  }
  p.clock->end(Phase::kOptimizer);
}

// Each micro-batch's backward carries its share of the step's mean over all ranks' images: the all-reduce
// sums, so no pass over the gradients is spent on averaging.
void TrainingStep::micro_batches(const StepAt& at, const at::Tensor& indices, EpochSums& sums) {
  auto& p = parts_;
  const int accumulation = p.config.train.accumulation_steps;
  const double share = 1.0 / (static_cast<double>(accumulation) * p.world.size());
  for (int micro = 0; micro < accumulation; ++micro) {
    const auto [x, y] = micro_batch(at.epoch, at.step * accumulation + micro, indices);
    p.clock->begin();
    before_forward(at, micro);
    at::Tensor loss, logits;
    {
      const TimelineSpan span(p.timeline, "forward", "compute");
      aids_.forward([&] { std::tie(loss, logits) = forward_loss(x, y); });
    }
    count_batch(loss.detach(), logits.detach().argmax(1).eq(y).sum(), at.global_step, sums);
    p.clock->end(Phase::kForward);

    p.clock->begin();
    before_backward(micro == accumulation - 1);
    {
      const TimelineSpan span(p.timeline, "backward", "compute");
      p.scaler->scale(loss * share).backward();
    }
    after_backward(micro, loss.detach());
    p.clock->end(Phase::kBackward);
  }
}

void TrainingStep::count_batch(const at::Tensor& loss, const at::Tensor& correct, std::int64_t global_step,
                               EpochSums& sums) {
  at::NoGradGuard no_grad;
  sums.loss_sum += loss.to(at::kDouble) * static_cast<double>(parts_.config.data.batch_size);
  sums.correct += correct;
  if (parts_.dtype == at::kHalf) return;  // fp16 overflows are the scaler's business: it skips the step
  const auto bad = at::logical_and(at::logical_not(at::isfinite(loss)), sums.first_bad.lt(0));
  sums.first_bad = at::where(bad, at::full_like(sums.first_bad, global_step), sums.first_bad);
}

// Fused, an fp16 overflow skips the step on the device and is counted there; otherwise the overflow flag is
// read on the host.
void TrainingStep::optimizer_step() {
  auto& p = parts_;
  if (p.fused) {
    const at::Tensor skip = p.scaler->unscale_on_device(p.parameters);
    p.fused->step(skip, p.scaler->grad_scale());
    if (skip.defined()) skipped_.add_(skip);
  } else if (p.scaler->unscale(p.parameters)) {
    p.optimizer->step();
  } else {
    ++skipped_count_;
  }
  p.scaler->update();
}

}  // namespace ft
