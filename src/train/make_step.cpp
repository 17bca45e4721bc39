// Choosing the step: the gradient engine's options from the config (wire type, buckets, stall timeout), then
// the kind of step, made once before the first step and kept for the run.
#include "train/make_step.h"

#include "engine/engine_autotune.h"
#include "runtime/error.h"
#include "runtime/world.h"
#include "train/overlapped_step.h"
#include "train/replayed_step.h"
#include "train/reproducible_step.h"

namespace ft {
namespace {

// distributed.compression as the gradient engine's wire type.
at::ScalarType wire_type(Compression compression) {
  switch (compression) {
    case Compression::fp16: return at::kHalf;
    case Compression::bf16: return at::kBFloat16;
    case Compression::none:
    case Compression::powersgd: return at::kFloat;  // PowerSGD's factors travel in the gradients' dtype
  }
  return at::kFloat;
}

GradientEngineOptions engine_options(StepParts& parts, const std::vector<NamedTensor>& named, RunSummary& summary) {
  const auto& d = parts.config.distributed;
  GradientEngineOptions options;
  options.bucket_mib = d.bucket_mib;
  options.first_bucket_mib = d.first_bucket_mib;
  options.last_bucket_mib = d.last_bucket_mib;
  options.wire = wire_type(d.compression);
  options.stall_timeout_s = d.stall_timeout_s;
  options.timeline = parts.timeline;
  options.order = parts.collective_order;
  // Averaging is folded into the loss (1/world in each backward), so packing is a plain copy and no pass
  // over the gradients is spent on scaling; sums of pre-divided values cannot overflow in fp16 either.
  options.average = false;
  if (d.autotune) apply_autotuned_buckets(parts.backend, parts.world, named, options);
  summary.bucket_mib = options.bucket_mib;
  summary.first_bucket_mib = options.first_bucket_mib;
  summary.last_bucket_mib = options.last_bucket_mib;
  summary.buckets_autotuned = d.autotune;
  return options;
}

}  // namespace

std::unique_ptr<TrainingStep> make_training_step(StepParts& parts, const std::vector<NamedTensor>& named,
                                                 RunSummary& summary, GraphedStep::RecordingFactory record_graphs) {
  GradientEngineOptions options = engine_options(parts, named, summary);
  const Config& c = parts.config;
  if (c.distributed.reproducible) return std::make_unique<ReproducibleStep>(parts);
  if (c.train.cuda_graphs) {
    FT_REQUIRE(!c.model.sync_batchnorm || parts.world.size() == 1, "model.sync_batchnorm cannot be used with "
               "train.cuda_graphs on ", parts.world.size(), " ranks: the replayed graph holds no collective but its "
               "one gradient all-reduce; set one of them to false (on one rank they go together)");
    return std::make_unique<ReplayedStep>(parts, std::move(record_graphs));
  }
  std::shared_ptr<PowerSgd> powersgd;
  if (c.distributed.compression == Compression::powersgd) {
    const PowerSgdOptions settings{c.distributed.powersgd_rank, c.distributed.powersgd_start_step, c.train.seed};
    powersgd = std::make_shared<PowerSgd>(named, parts.world.size(), settings);
    options.reducer = powersgd;
  }
  return std::make_unique<OverlappedStep>(
      parts, std::make_unique<GradientEngine>(parts.backend, parts.world, named, options), std::move(powersgd));
}

}  // namespace ft
