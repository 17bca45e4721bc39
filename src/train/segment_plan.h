// A run's segment (its stretch from a start or resume to a stop or the end): the batch it trains with
// under the elastic rule, where in the run it starts, and the lines that explain a change of world size.
#pragma once

#include <string>
#include <vector>

#include "config/schema.h"
#include "results/run_record.h"
#include "train/batch_rule.h"
#include "checkpoint/checkpoint.h"

namespace ft {

struct SegmentPlan {
  BatchLayout layout;
  std::int64_t reference_batch = 0;  // the first segment's global batch
  SegmentRecord segment;             // this segment; wall_time_s is filled in as it runs
  std::vector<std::string> notes;    // printed by rank 0 at the start
};

// `here`: the segment's world, nodes, backend, device and start time. `saved`: the checkpoint's position,
// or nullptr for a fresh start. Throws ft::Error (naming elastic.batch) when the global batch cannot be kept.
SegmentPlan plan_segment(const Config& config, SegmentRecord here, const TrainingPosition* saved);

// The config the segment trains with: data.batch_size, train.accumulation_steps and optimizer.lr of the plan.
Config segment_config(const Config& config, const SegmentPlan& plan);

}  // namespace ft
