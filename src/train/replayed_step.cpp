// The replayed step: the batch made eagerly, the graph replayed (timed as forward), then on several ranks
// the flat gradient all-reduced in place over NCCL on the same stream and the fused optimizer stepped.
#include "train/replayed_step.h"

#include "comm/backend.h"
#include "runtime/error.h"
#include "runtime/world.h"
#include "optim/fused_step.h"

namespace ft {

ReplayedStep::ReplayedStep(StepParts& parts, GraphedStep::RecordingFactory record) : TrainingStep(parts) {
  auto& p = parts_;
  FT_REQUIRE(p.fused, "train.cuda_graphs needs the fused optimizer step");
  FT_REQUIRE(p.world.size() == 1 || p.backend.uses_device_memory(), "train.cuda_graphs on ", p.world.size(),
             " ranks all-reduces GPU memory in place: it needs distributed.backend 'nccl', not '",
             p.config.distributed.backend, "'");
  gradients_ = GradientBuffer(p.parameters, p.device);
  p.fused->use_device_rates();
  graphed_ = std::make_unique<GraphedStep>([this](const StepBuffers& b) { body(b); }, std::move(record));
}

ReplayedStep::~ReplayedStep() = default;

void ReplayedStep::body(const StepBuffers& b) {
  auto& p = parts_;
  gradients_.zero();
  const auto [loss, logits] = forward_loss(b.x, b.y);
  {
    at::NoGradGuard no_grad;
    b.loss.copy_(loss.detach());
    b.correct.copy_(logits.detach().argmax(1).eq(b.y).sum());
  }
  p.scaler->scale(loss * (1.0 / p.world.size())).backward();  // the all-reduce sums: the mean comes from here
  if (p.world.size() == 1) optimizer_step();
}

// At most GradientBuffer::kInFlight steps' all-reduces are in flight; the loss and correct count join the
// epoch's sums on the device.
void ReplayedStep::compute(const StepAt& at, const at::Tensor& indices, EpochSums& sums) {
  auto& p = parts_;
  const auto [x, y] = micro_batch(at.epoch, at.step, indices);
  p.clock->begin();
  p.fused->load_rates();
  const StepBuffers& out = graphed_->run(x, y);
  p.clock->end(Phase::kForward);
  if (p.world.size() > 1) {
    p.clock->begin();
    gradients_.allreduce(p.backend);
    p.clock->end(Phase::kCommWait);
    p.clock->begin();
    optimizer_step();
    p.clock->end(Phase::kOptimizer);
  }
  count_batch(out.loss, out.correct, at.global_step, sums);
}

void ReplayedStep::settle() {
  if (parts_.world.size() > 1) parts_.backend.wait_in_flight();
}

void ReplayedStep::summarise(RunSummary& summary, RankRecord& rank) {
  TrainingStep::summarise(summary, rank);
  summary.graph_captures = graphed_->captured() ? 1 : 0;
  summary.graph_replays = graphed_->replays() - replays_before_;
}

void ReplayedStep::forget_warm_up() {
  TrainingStep::forget_warm_up();
  replays_before_ = graphed_->replays();
}

}  // namespace ft
