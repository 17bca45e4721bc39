// The overlapped step's record of its communication: bytes and time of the engine's all-reduces and the
// share of that time hidden behind backward.
#include "train/overlapped_step.h"

namespace ft {

OverlappedStep::OverlappedStep(StepParts& parts, std::unique_ptr<GradientEngine> engine,
                               std::shared_ptr<PowerSgd> powersgd)
    : TrainingStep(parts), engine_(std::move(engine)), powersgd_(std::move(powersgd)) {}

OverlappedStep::~OverlappedStep() = default;

void OverlappedStep::summarise(RunSummary& summary, RankRecord& rank) {
  TrainingStep::summarise(summary, rank);
  EngineStats engine = engine_->stats();
  engine.wait_s -= warm_up_.wait_s;
  engine.allreduce_s -= warm_up_.allreduce_s;
  engine.bytes -= warm_up_.bytes;
  rank.allreduce_bytes = engine.bytes;
  rank.allreduce_s = engine.allreduce_s;
  rank.comm_hidden_fraction = engine.hidden_fraction();
}

void OverlappedStep::forget_warm_up() {
  TrainingStep::forget_warm_up();
  warm_up_ = engine_->stats();
}

StepState OverlappedStep::checkpointed_state() {
  if (!powersgd_) return {};
  return {powersgd_->shared_state(), powersgd_->rank_state()};
}

}  // namespace ft
