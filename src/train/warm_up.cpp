// The warm-up's snapshot and its steps: copies of every tensor the steps may change, taken before them and
// written back in place after them, with the optimizer's per-parameter state objects put back whole.
#include "train/warm_up.h"

#include <utility>

#include "device/device_setup.h"
#include "optim/optimizer.h"

namespace ft {

TrainingSnapshot::TrainingSnapshot(StepParts& parts, TrainingStep& step) : parts_(parts) {
  at::NoGradGuard no_grad;
  for (const auto& t : parts.network.parameters()) keep(t);
  for (const auto& t : parts.network.buffers()) keep(t);
  keep(parts.scaler->scale_state());
  keep(parts.scaler->growth_state());
  if (parts.lookahead)
    for (const auto& t : parts.lookahead->slow()) keep(t);
  const StepState kind = step.checkpointed_state();
  for (const auto& t : kind.shared) keep(t);
  for (const auto& t : kind.own) keep(t);
  for (const auto& [key, state] : parts.optimizer->state()) states_[key] = state->clone();  // counts, same tensors
  update_optimizer_state(*parts.optimizer, [this](const std::string& name, const at::Tensor& t) {
    optimizer_values_[name] = t.detach().clone();
    return t;
  });
  generators_ = capture_generators(parts.device);
}

TrainingSnapshot::~TrainingSnapshot() = default;

void TrainingSnapshot::keep(const at::Tensor& t) {
  if (!t.defined()) return;
  live_.push_back(t);
  saved_.push_back(t.detach().clone());
}

void TrainingSnapshot::restore() {
  at::NoGradGuard no_grad;
  for (std::size_t i = 0; i < live_.size(); ++i) live_[i].detach().copy_(saved_[i]);
  restore_optimizer();
  if (parts_.fused) parts_.fused->reload_step_counts();
  restore_generators(generators_, parts_.device);
}

void TrainingSnapshot::restore_optimizer() {
  auto& state = parts_.optimizer->state();
  std::vector<void*> made;
  for (auto& [key, now] : state) {
    const auto saved = states_.find(key);
    if (saved != states_.end())
      now = saved->second->clone();
    else
      made.push_back(key);
  }
  const bool fused = parts_.fused != nullptr;
  if (!fused)
    for (void* key : made) state.erase(key);
  update_optimizer_state(*parts_.optimizer, [this](const std::string& name, const at::Tensor& t) {
    const auto saved = optimizer_values_.find(name);
    if (saved == optimizer_values_.end())
      t.detach().zero_();  // the fused step's own, made in between: as it would make it
    else
      t.detach().copy_(saved->second);
    return t;
  });
}

void warm_up(TrainingStep& step, int steps, const WarmUpAt& at, const at::Tensor& indices) {
  StepParts& p = step.parts();
  TrainingSnapshot snapshot(p, step);
  const auto opts = at::TensorOptions().device(p.device);
  EpochSums sums{at::zeros({1}, opts.dtype(at::kDouble)), at::zeros({1}, opts.dtype(at::kLong)),
                 at::full({1}, -1, opts.dtype(at::kLong)), 0.0, 0, at::zeros({1}, opts.dtype(at::kDouble))};
  p.network.train();
  p.train_params->epoch = at.epoch;
  for (int k = 0; k < steps; ++k) {
    const std::int64_t slot = (at.first_step + k) % at.steps_in_epoch;
    step.run(StepAt{at.epoch, slot, at.global_step + k}, indices, sums);
  }
  step.settle();
  synchronize(p.device);
  snapshot.restore();
  step.forget_warm_up();
  synchronize(p.device);
}

}  // namespace ft
