// The one place that chooses a run's kind of training step from its config: the overlapped all-reduce by
// default, distributed.reproducible's exact sums, or train.cuda_graphs' replay of a captured step.
#pragma once

#include <memory>
#include <vector>

#include "engine/engine.h"
#include "results/run_record.h"
#include "device/graphed_step.h"
#include "train/step.h"

namespace ft {

// The step of `parts.config` over the trainable parameters `named` (parts.parameters, by name). The fusion
// buckets (as configured, or autotuned: collective) are planned for every kind and recorded in `summary`.
// `record_graphs` makes train.cuda_graphs' recording (empty: a CUDA graph).
std::unique_ptr<TrainingStep> make_training_step(StepParts& parts, const std::vector<NamedTensor>& named,
                                                 RunSummary& summary, GraphedStep::RecordingFactory record_graphs);

}  // namespace ft
