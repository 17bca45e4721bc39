// train.warmup_steps: training steps run before the clock starts, on state that is then put back exactly, so
// that a run's clocks start after cuDNN's autotuning, kernel loading, the allocator's growth and the CUDA-graph
// capture, and its results are those of a run without them.
#pragma once

#include <ATen/ATen.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "optim/rank_streams.h"
#include "train/step.h"

namespace ft {

// Everything a training step changes, kept so that it can be put back: the network's parameters and buffers
// (BatchNorm's running statistics among them), the optimizer's state and step counts, the fused step's device
// counts, the loss scale, lookahead's slow weights, the step kind's own state (PowerSGD) and the random streams.
// Tensors are put back in place (a captured CUDA graph keeps their addresses). Optimizer state made by the
// steps in between is erased, or zeroed where the fused step made it (it makes missing state as zeros, and a
// graph may hold it).
class TrainingSnapshot {
 public:
  TrainingSnapshot(StepParts& parts, TrainingStep& step);
  ~TrainingSnapshot();
  void restore();

 private:
  void keep(const at::Tensor& t);
  void restore_optimizer();

  StepParts& parts_;
  std::vector<at::Tensor> live_, saved_;  // each tensor and its copy
  std::map<void*, std::unique_ptr<torch::optim::OptimizerParamState>> states_;  // the optimizer's, by parameter
  std::map<std::string, at::Tensor> optimizer_values_;                         // their tensors' copies, by name
  GeneratorState generators_;
};

// Where the warm-up's steps train: the first epoch of the segment, from its first step on (wrapping round the
// epoch's order when the steps outnumber what is left of it), the schedule's rates from `global_step` on.
struct WarmUpAt {
  int epoch = 1;
  std::int64_t first_step = 0, steps_in_epoch = 1, global_step = 0;
};

// Runs `steps` steps of `step` (collective: every rank runs the same ones) on the epoch's order `indices`, then
// puts back everything they changed and lets the step forget its counts (skipped steps, communication, replays).
// The device is synchronised before it returns.
void warm_up(TrainingStep& step, int steps, const WarmUpAt& at, const at::Tensor& indices);

}  // namespace ft
