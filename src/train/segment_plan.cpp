// Planning a segment is pure (config, world, saved position in; layout, start and notes out), so the
// rules for resuming on another number of ranks are unit-tested without ranks or a model.
#include "train/segment_plan.h"

#include "runtime/error.h"

namespace ft {
namespace {

std::string ranks_text(int n) { return cat(n, n == 1 ? " rank" : " ranks"); }

// What a resume on another world size means for the order of the interrupted epoch.
void note_order(const Config& config, const TrainingPosition& saved, const SegmentPlan& plan,
                std::vector<std::string>& notes) {
  const SegmentRecord& s = plan.segment;
  if (s.start_step == 0 && saved.sample == 0) return;
  if (config.data.shuffle == Shuffle::local)
    notes.push_back(cat("data.shuffle local: the ranks' slices depend on the number of ranks, so the rest of epoch ",
                        s.start_epoch, " draws from the new slices in their own order (an image may recur or be "
                        "missed in that epoch); data.shuffle: global keeps one order for any number of ranks"));
  if (s.start_sample != saved.sample)
    notes.push_back(cat("epoch ", s.start_epoch, " goes on from image ", s.start_sample, " of its global order (the stop "
                        "was at ", saved.sample, "; a step of ", plan.layout.global_batch, " images starts there)"));
}

}  // namespace

SegmentPlan plan_segment(const Config& config, SegmentRecord here, const TrainingPosition* saved) {
  SegmentPlan plan;
  const auto& c = config;
  const std::int64_t configured = std::int64_t{c.data.batch_size} * c.train.accumulation_steps * here.world_size;
  plan.reference_batch = saved && saved->reference_batch > 0 ? saved->reference_batch : configured;
  const BatchRuleInput rule{plan.reference_batch, here.world_size, c.data.batch_size, c.train.accumulation_steps,
                            c.elastic.batch, c.elastic.lr_scaling};
  plan.layout = resolve_batch(rule);
  here.segment = saved ? static_cast<int>(saved->segments.size()) + 1 : 1;
  here.per_rank_batch = plan.layout.per_rank_batch;
  here.accumulation = plan.layout.accumulation;
  here.global_batch = plan.layout.global_batch;
  here.lr_factor = plan.layout.lr_factor;
  if (saved) {
    here.start_epoch = saved->epoch;
    here.start_step = saved->sample / plan.layout.global_batch;
    here.start_sample = here.start_step * plan.layout.global_batch;
  }
  plan.segment = here;
  if (!saved || saved->segments.empty()) return plan;
  const int before = saved->segments.back().world_size;
  if (before != here.world_size || plan.layout.global_batch != saved->segments.back().global_batch) {
    plan.notes.push_back(cat("resuming on ", ranks_text(here.world_size), " (the checkpoint was written on ",
                             ranks_text(before), "): ", describe_batch(rule, plan.layout)));
    note_order(config, *saved, plan, plan.notes);
  }
  return plan;
}

Config segment_config(const Config& config, const SegmentPlan& plan) {
  Config c = config;
  c.data.batch_size = plan.layout.per_rank_batch;
  c.train.accumulation_steps = plan.layout.accumulation;
  c.optimizer.lr *= plan.layout.lr_factor;
  return c;
}

}  // namespace ft
