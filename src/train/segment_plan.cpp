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
  if (saved.sample == 0) return;  // stopped at an epoch's start, so resumed there: nothing of it was drawn yet
  if (config.data.shuffle == Shuffle::local)
    notes.push_back(cat("data.shuffle local: the ranks' slices depend on the number of ranks, so the rest of epoch ",
                        s.start_epoch, " draws from the new slices in their own order (an image may recur or be "
                        "missed in that epoch); data.shuffle: global keeps one order for any number of ranks"));
  if (s.start_sample != saved.sample)
    notes.push_back(cat("epoch ", s.start_epoch, " goes on from image ", s.start_sample, " of its global order (the stop "
                        "was at ", saved.sample, "; a step of ", plan.layout.global_batch, " images starts there)"));
}

// distributed.reproducible: the step is micro_batches micro-batches of data.batch_size images whatever the
// number of ranks, each rank taking micro_batches / N of them in turn (as accumulation steps).
BatchLayout reproducible_layout(const Config& c, int ranks) {
  const int s = c.distributed.micro_batches;
  FT_REQUIRE(s % ranks == 0, "distributed.reproducible: distributed.micro_batches ", s, " cannot be split over ",
             ranks, " ranks: run on a number of ranks that divides it (", s, ", or one of its divisors)");
  return {c.data.batch_size, s / ranks, std::int64_t{c.data.batch_size} * s, 1.0};
}

std::string reproducible_note(const Config& c, int ranks, const BatchLayout& layout) {
  return cat("distributed.reproducible keeps ", c.distributed.micro_batches, " micro-batches of ", c.data.batch_size,
             " images per step (", layout.global_batch, " images): ", ranks_text(ranks), " x ", layout.accumulation,
             layout.accumulation == 1 ? " micro-batch" : " micro-batches", ", the same bits as on any other number of ranks");
}

}  // namespace

SegmentPlan plan_segment(const Config& config, SegmentRecord here, const TrainingPosition* saved) {
  SegmentPlan plan;
  const auto& c = config;
  const std::int64_t configured = c.distributed.reproducible
                                      ? std::int64_t{c.data.batch_size} * c.distributed.micro_batches
                                      : std::int64_t{c.data.batch_size} * c.train.accumulation_steps * here.world_size;
  plan.reference_batch = saved && saved->reference_batch > 0 ? saved->reference_batch : configured;
  const BatchRuleInput rule{plan.reference_batch, here.world_size, c.data.batch_size, c.train.accumulation_steps,
                            c.elastic.batch, c.elastic.lr_scaling};
  plan.layout = c.distributed.reproducible ? reproducible_layout(c, here.world_size) : resolve_batch(rule);
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
                             ranks_text(before), "): ",
                             c.distributed.reproducible ? reproducible_note(c, here.world_size, plan.layout)
                                                        : describe_batch(rule, plan.layout)));
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
