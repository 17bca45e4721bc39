// train.cuda_graphs' training step: after GraphedStep's eager warm-up, forward, loss and backward (and on one
// rank the fused optimizer step) replay from one captured CUDA graph; several ranks all-reduce after it.
#pragma once

#include <memory>

#include "device/graphed_step.h"
#include "train/step.h"

namespace ft {

class ReplayedStep final : public TrainingStep {
 public:
  // Throws, naming the cause, where the run's ranks and backend cannot replay a step: it needs the fused
  // optimizer step, and on several ranks a backend that all-reduces device memory (NCCL).
  // `record`: GraphedStep's recording (a CUDA graph when empty; a stand-in lets a CPU test replay the step).
  ReplayedStep(StepParts& parts, GraphedStep::RecordingFactory record);
  ~ReplayedStep() override;
  // On several ranks each step's all-reduce is left in flight and no engine thread watches it: before a
  // device read, which would wait for ever behind a stalled all-reduce, the backend waits for them against
  // the stall timeout, so a lost rank ends the run, named, instead of hanging it.
  void settle() override;
  // Also the graph's captures and replays, the proof that the step ran from a graph.
  void summarise(RunSummary& summary, RankRecord& rank) override;
  // Replays count from here on; the capture, made in the warm-up's steps, is kept.
  void forget_warm_up() override;

 private:
  void compute(const StepAt& at, const at::Tensor& indices, EpochSums& sums) override;
  // What the graph records: the gradients zeroed, forward and loss on the static batch, the loss and correct
  // count into the static outputs, backward (into the flat gradient buffer) and, on one rank, the fused step
  // with fp16's unscaling, skip and scale update, all decided on the device.
  void body(const StepBuffers& buffers);

  GradientBuffer gradients_;  // every gradient is a view into this float32 buffer
  std::unique_ptr<GraphedStep> graphed_;
  std::int64_t replays_before_ = 0;  // replays of train.warmup_steps' steps
};

}  // namespace ft
