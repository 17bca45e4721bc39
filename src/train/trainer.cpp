// The training loop. Every rank executes the same number of optimizer steps and the same collectives
// in the same order; all per-epoch metrics are reduced globally, so every rank takes the same decisions
// (early stopping, errors) and rank 0 only has to print and write them.
#include "train/trainer.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <tuple>
#include <utility>

#include "engine/engine.h"
#include "engine/engine_autotune.h"
#include "engine/replica_check.h"
#include "comm/backend.h"
#include "comm/stall_inspector.h"
#include "comm/timeline.h"
#include "config/fingerprint.h"
#include "config/loader.h"
#include "data/dataset.h"
#include "data/sampler.h"
#include "models/channels_last.h"
#include "monitor/memory.h"
#include "monitor/op_profiler.h"
#include "monitor/phase_clock.h"
#include "monitor/training_monitor.h"
#include "runtime/error.h"
#include "runtime/signals.h"
#include "runtime/world.h"
#include "train/device_setup.h"
#include "train/evaluation.h"
#include "history/history.h"
#include "results/rank_gather.h"
#include "train/lookahead.h"
#include "train/optimizer.h"
#include "train/rank_streams.h"
#include "train/finite_state.h"
#include "train/fused_step.h"
#include "train/graphed_step.h"
#include "train/reproducible_step.h"
#include "train/resume.h"
#include "train/scheduler.h"
#include "train/state_digest.h"
#include "train/sync_check.h"

namespace ft {
namespace {

// distributed.compression as the gradient engine's wire type.
at::ScalarType wire_type(Compression compression) {
  switch (compression) {
    case Compression::fp16: return at::kHalf;
    case Compression::bf16: return at::kBFloat16;
    case Compression::none: return at::kFloat;
  }
  return at::kFloat;
}

std::int64_t limited(std::int64_t total, std::int64_t limit) { return limit > 0 ? std::min(total, limit) : total; }

// Copies every parameter and buffer from rank 0 so all replicas start identical.
void broadcast_state(Network& net, const World& world) {
  std::vector<at::Tensor> tensors;
  for (const auto& p : net.parameters()) tensors.push_back(p);
  for (const auto& b : net.buffers()) tensors.push_back(b);
  at::NoGradGuard no_grad;
  for (auto& t : tensors) {
    auto host = t.detach().to(at::kCPU).contiguous().clone();
    world.broadcast_bytes(host.data_ptr(), static_cast<std::size_t>(host.numel() * host.element_size()));
    t.detach().copy_(host);
  }
}

// BatchNorm running statistics drift apart between replicas, each seeing its own batches (they never enter a
// gradient). Their mean over ranks is what every evaluation scores and what the model file keeps, so the
// accuracy a run prints is the saved network's. Integer buffers (batch counts) are equal on every rank.
void average_running_statistics(Network& net, const World& world) {
  if (world.size() == 1) return;
  std::vector<at::Tensor> buffers;
  for (const auto& b : net.buffers())
    if (b.is_floating_point()) buffers.push_back(b);
  if (buffers.empty()) return;
  std::vector<at::Tensor> flat;
  for (const auto& b : buffers) flat.push_back(b.detach().to(at::kCPU, at::kDouble).reshape(-1));
  auto host = at::cat(flat).contiguous();
  {
    const CollectiveLabel label("batch-norm running statistics");
    world.allreduce_sum(host.data_ptr<double>(), static_cast<int>(host.numel()));
  }
  host.div_(world.size());
  at::NoGradGuard no_grad;
  std::int64_t offset = 0;
  for (auto& b : buffers) {
    b.detach().copy_(host.narrow(0, offset, b.numel()).view(b.sizes()));
    offset += b.numel();
  }
}

// The index of an image draw in the augmentation's random streams: an epoch holds fewer than 2^40 draws,
// and within it draws are numbered in global batch order (slot by slot, rank by rank), so a draw's
// augmentation does not depend on which rank makes it.
std::int64_t draw_position(int epoch, std::int64_t slot, std::int64_t batch, int rank, int ranks) {
  return (static_cast<std::int64_t>(epoch) << 40) + slot * batch * ranks + static_cast<std::int64_t>(rank) * batch;
}

}  // namespace

// What run() builds before the first step and the steps share.
struct Trainer::State {
  std::unique_ptr<DeviceDataset> train, test;
  at::ScalarType dtype = at::kFloat, param_dtype = at::kFloat, amp_dtype = at::kFloat;
  std::vector<at::Tensor> parameters;  // trainable: all-reduced and optimised
  std::vector<ParameterGroup> groups;
  std::unique_ptr<GradientEngine> engine;             // the default step's all-reduce
  std::unique_ptr<ReproducibleStep> reproducible;     // distributed.reproducible's exact sums instead
  std::unique_ptr<torch::optim::Optimizer> optimizer;
  std::unique_ptr<FusedStep> fused;  // the optimizer's step as fused kernels (optimizer.implementation)
  std::unique_ptr<GraphedStep> graphed;  // train.cuda_graphs: the step captured and replayed
  GradientBuffer gradients;  // train.cuda_graphs: every gradient is a view into this float32 buffer
  std::unique_ptr<LossScaler> scaler;
  at::Tensor skipped;  // fp16 steps the fused step skipped on the device, not yet counted on the host
  std::unique_ptr<Sampler> sampler;
  std::unique_ptr<LearningRateSchedule> schedule;
  std::unique_ptr<Lookahead> lookahead;
  std::unique_ptr<Resume> resume;
  CheckpointPolicy checkpoint_policy;  // how many checkpoints to keep, and what to do when all are damaged
  ResumeSource resume_from;  // the checkpoint file this run starts from, until `resume` takes it
  std::unique_ptr<OpProfiler> profiler;  // per-operator trace of a window of steps (profile.*)
  AugmentParams train_params, test_params;
  EvalOptions eval_options;
  std::int64_t steps_per_epoch = 0, images_per_epoch = 0;
  std::unique_ptr<PhaseClock> clock;  // per-phase times: host clock on CPUs, CUDA events on GPUs
  std::unique_ptr<TrainingMonitor> monitor;  // rank 0's TensorBoard event file and progress line
  double eval_wall_s = 0;  // evaluation on the host clock (that of the training time it is taken from)
  double lr = 0;  // of the last step
};

// One epoch's train loss sum, correct count and first non-finite step, kept on the device; and on rank 0 of
// a resumed epoch, the sums over all ranks before the stop, which count towards the global figures only.
struct Trainer::EpochSums {
  at::Tensor loss_sum, correct, first_bad;
  double carried_loss = 0;
  std::int64_t carried_correct = 0;
  // distributed.reproducible: the exact loss sum over all ranks, the same on every rank, starting from the
  // interrupted epoch's sum so that it adds up in the uninterrupted run's order.
  at::Tensor exact_loss;
};

Trainer::Trainer(const Config& config, const World& world, Backend& backend, at::Device device, TrainerOptions options)
    : configured_(config), config_(config), world_(world), backend_(backend), device_(device), options_(std::move(options)),
      timeline_(options_.timeline) {}

Trainer::~Trainer() = default;

TrainOutcome Trainer::run() {
  state_ = std::make_unique<State>();
  // The engine, optimizer and data live for one run: released on return and when an error unwinds.
  struct Release {
    std::unique_ptr<State>& state;
    ~Release() { state.reset(); }
  } released{state_};
  out_ = TrainOutcome{};
  plan_segment();
  load_slices();
  build_replica();
  make_engine();
  plan_steps();
  TrainingPosition start = state_->resume->start();
  out_.epochs = start.history;
  out_.rank_epochs = start.rank_history;
  out_.segments = start.segments;
  out_.segments.push_back(plan_.segment);
  out_.summary.skipped_steps = start.skipped_steps;
  global_step_ = start.global_step;
  if (start.step != plan_.segment.start_step) {  // another global batch: the schedule follows the epoch's steps
    start.step = plan_.segment.start_step;
    global_step_ = (start.epoch - 1) * state_->steps_per_epoch + start.step;
  }
  const MonitorSetup watched{world_.rank(), device_, options_.checkpoint_path, state_->steps_per_epoch,
                             state_->images_per_epoch / state_->steps_per_epoch,
                             std::int64_t{config_.train.accumulation_steps} * config_.data.batch_size, global_step_,
                             dump_config(configured_)};
  state_->monitor = std::make_unique<TrainingMonitor>(config_, watched);

  world_.barrier();
  Stopwatch training;
  for (int epoch = start.epoch; epoch <= config_.train.epochs; ++epoch) {
    EpochRecord record;
    run_epoch(epoch, start, record);
    evaluate_into(record);
    record_digests(record);
    out_.epochs.push_back(record);
    state_->monitor->end_epoch(global_step_, record, out_.rank_epochs);
    print_epoch(record);
    if (config_.train.checkpoint_every > 0 && epoch % config_.train.checkpoint_every == 0 &&
        epoch < config_.train.epochs) {
      require_finite_test_loss(record);
      state_->resume->save(position_at(epoch + 1, 0, 0.0, 0));
    }
    if (should_stop_early(out_.epochs, config_.regularization.early_stopping_patience)) {
      out_.summary.stopped_early = true;
      if (world_.rank() == 0)
        std::printf("early stopping: no better test loss for %d epochs\n",
                    config_.regularization.early_stopping_patience);
      break;
    }
  }
  synchronize(device_);
  out_.segments.back().wall_time_s = segment_clock_.seconds();
  summarise(training, start.history.size());
  return std::move(out_);
}

// This segment's batch: as configured on a fresh start; on a resume, the elastic rule applied to the first
// segment's global batch, explained by rank 0 when the number of ranks changed.
void Trainer::plan_segment() {
  SegmentRecord here;
  here.world_size = world_.size();
  here.node_count = world_.node_count();
  here.backend = backend_.name();
  here.device = device_name(device_);
  here.started_at = options_.started_at;
  state_->checkpoint_policy = {configured_.train.keep_checkpoints, options_.discard_damaged_checkpoints};
  state_->resume_from = choose_resume_source(options_.checkpoint_path, world_, state_->checkpoint_policy);
  const auto saved = saved_position(state_->resume_from.path, run_fingerprint(configured_), world_);
  try {
    plan_ = ft::plan_segment(configured_, here, saved ? &*saved : nullptr);
  } catch (const Error& e) {
    throw SharedError(e.what());  // every rank plans from the same checkpoint and config: the same refusal
  }
  config_ = segment_config(configured_, plan_);
  segment_clock_ = Stopwatch();
  if (world_.rank() != 0) return;
  for (const auto& line : plan_.notes) std::printf("%s\n", line.c_str());
  std::fflush(stdout);
}

// The state a checkpoint at (epoch, step) records: the place in the epoch's global order, the history and
// every segment so far with this one's time up to now.
TrainingPosition Trainer::position_at(int epoch, std::int64_t step, double loss_sum, std::int64_t correct) {
  out_.segments.back().wall_time_s = segment_clock_.seconds();
  TrainingPosition p;
  p.epoch = epoch;
  p.step = step;
  p.sample = step * plan_.layout.global_batch;
  p.reference_batch = plan_.reference_batch;
  p.global_step = global_step_;
  p.loss_sum = loss_sum;
  p.correct = correct;
  p.skipped_steps = skipped_steps();
  p.history = out_.epochs;
  p.rank_history = out_.rank_epochs;
  p.segments = out_.segments;
  return p;
}

// Each rank loads only its slice of the splits onto the device (global shuffle: the whole train split).
void Trainer::load_slices() {
  const auto& c = config_;
  const ShardReader train_reader(c.data.path, "train");
  const ShardReader test_reader(c.data.path, "test");
  const std::int64_t train_total = limited(train_reader.total(), c.data.limit_train);
  const std::int64_t test_total = limited(test_reader.total(), c.data.limit_test);
  FT_REQUIRE(world_.size() <= test_total, world_.size(), " ranks but the test split has only ", test_total,
             " images: use fewer ranks");
  const bool global = c.data.shuffle == Shuffle::global;
  const auto train_range = global ? std::pair<std::int64_t, std::int64_t>{0, train_total}
                                  : slice_of(train_total, world_.rank(), world_.size());
  // distributed.reproducible evaluates the whole split in batches that do not depend on the number of ranks.
  const auto test_range = c.distributed.reproducible ? std::pair<std::int64_t, std::int64_t>{0, test_total}
                                                     : slice_of(test_total, world_.rank(), world_.size());
  const HostSplit host_train = train_reader.read(train_range.first, train_range.second);
  const HostSplit host_test = test_reader.read(test_range.first, test_range.second);
  const ShardMeta &a = host_train.meta, &b = host_test.meta;
  FT_REQUIRE(a.height == b.height && a.width == b.width && a.channels == b.channels, "data.path ", c.data.path,
             ": test images are ", b.height, "x", b.width, "x", b.channels, " but train images are ", a.height, "x",
             a.width, "x", a.channels);
  state_->train = std::make_unique<DeviceDataset>(host_train, device_);
  state_->test = std::make_unique<DeviceDataset>(host_test, device_);
  out_.data = train_reader.meta();
}

// The network, identical on every rank: built from the seed, fitted to the data where a layer asks for
// it, laid out as configured and broadcast from rank 0.
void Trainer::build_replica() {
  auto& s = *state_;
  const auto& meta = s.train->meta();
  const InputShape shape{meta.channels, meta.height, meta.width, static_cast<int>(meta.class_names.size())};
  s.dtype = training_dtype(config_.precision.dtype);
  s.param_dtype = s.dtype == at::kDouble ? at::kDouble : at::kFloat;
  s.amp_dtype = (s.dtype == at::kHalf || s.dtype == at::kBFloat16) ? s.dtype : at::kFloat;
  at::manual_seed(config_.train.seed);
  network_ = make_network(config_.model, shape);
  network_->to(device_, s.param_dtype);
  {
    // Layers fitted to the data (fast_cifar's whitening) see un-augmented, normalised training images:
    // at most 5000, and at most 64 MiB of them. Rank 0's result is what the broadcast below keeps.
    const std::int64_t per_image = std::int64_t{meta.channels} * meta.height * meta.width * 4;
    const std::int64_t n =
        std::min({s.train->size(), std::int64_t{5000}, std::max<std::int64_t>(1, (64 << 20) / per_image)});
    auto plain = s.train->augment_params(0, false, 0, config_.data.normalize);
    plain.train = false;
    const auto idx = at::arange(n, at::TensorOptions().dtype(at::kLong));
    at::NoGradGuard no_grad;
    network_->initialize_from_data(s.train->batch(idx, plain, 0, s.param_dtype, false).first);
  }
  // Every replica starts from rank 0's weights (below) but draws its own dropout masks from here on.
  seed_rank_streams(config_.train.seed, world_.rank());
  if (config_.precision.channels_last) use_channels_last(*network_);
  broadcast_state(*network_, world_);
}

// The gradient engine over the trainable parameters, the optimizer with its parameter groups, and the
// fp16 loss scaler.
void Trainer::make_engine() {
  auto& s = *state_;
  std::vector<NamedTensor> named;
  std::vector<std::pair<std::string, at::Tensor>> all_named;
  for (const auto& item : network_->named_parameters()) {
    all_named.emplace_back(item.key(), item.value());
    if (!item.value().requires_grad()) continue;  // frozen: neither all-reduced nor optimised
    named.push_back({item.key(), item.value()});
    s.parameters.push_back(item.value());
  }
  GradientEngineOptions options;
  options.bucket_mib = config_.distributed.bucket_mib;
  options.first_bucket_mib = config_.distributed.first_bucket_mib;
  options.last_bucket_mib = config_.distributed.last_bucket_mib;
  options.wire = wire_type(config_.distributed.compression);
  options.stall_timeout_s = config_.distributed.stall_timeout_s;
  options.timeline = timeline_;
  // Averaging is folded into the loss (1/world in forward_backward), so packing is a plain copy and no
  // pass over the gradients is spent on scaling; sums of pre-divided values cannot overflow in fp16 either.
  options.average = false;
  if (config_.distributed.autotune) apply_autotuned_buckets(backend_, world_, named, options);
  out_.summary.bucket_mib = options.bucket_mib;
  out_.summary.first_bucket_mib = options.first_bucket_mib;
  out_.summary.last_bucket_mib = options.last_bucket_mib;
  out_.summary.buckets_autotuned = config_.distributed.autotune;
  if (config_.distributed.reproducible)
    s.reproducible = std::make_unique<ReproducibleStep>(*network_, s.parameters, config_.train.accumulation_steps,
                                                        config_.distributed.micro_batches, world_.rank(),
                                                        world_.size(), config_.train.seed);
  else if (!config_.train.cuda_graphs)  // a graphed step all-reduces one flat gradient buffer itself
    s.engine = std::make_unique<GradientEngine>(backend_, world_, named, options);
  s.groups = group_parameters(all_named, network_->parameter_rules());
  s.optimizer = make_optimizer(config_.optimizer, s.groups);
  const auto& p = config_.precision;
  s.scaler = std::make_unique<LossScaler>(s.dtype == at::kHalf, p.initial_scale, p.growth_interval, device_);
  s.fused = FusedStep::make(*s.optimizer, config_.optimizer, device_);
  s.skipped = at::zeros({1}, at::TensorOptions().device(device_).dtype(at::kFloat));
  if (config_.train.cuda_graphs) make_graphed_step();
}

// Steps per epoch (equal on every rank), the schedule, augmentation and evaluation settings, lookahead
// and the checkpoint this run resumes from and saves to.
void Trainer::plan_steps() {
  auto& s = *state_;
  const auto& c = config_;
  SamplerSetup setup;
  setup.shuffle = c.data.shuffle;
  setup.remainder = c.data.remainder;
  setup.local_size = s.train->size();
  double extent[2] = {-static_cast<double>(s.train->size()), static_cast<double>(s.train->size())};
  world_.allreduce_max(extent, 2);
  setup.min_local = static_cast<std::int64_t>(-extent[0]);
  setup.max_local = static_cast<std::int64_t>(extent[1]);
  setup.rank = world_.rank();
  setup.world = world_.size();
  setup.batch = c.data.batch_size;
  setup.seed = c.train.seed;
  s.sampler = std::make_unique<Sampler>(setup);
  const int accumulation = c.train.accumulation_steps;
  s.steps_per_epoch = s.sampler->steps_per_epoch() / accumulation;
  FT_REQUIRE(s.steps_per_epoch > 0, "train.accumulation_steps ", accumulation, " needs at least that many "
             "batches per epoch but each rank has ", s.sampler->steps_per_epoch());
  s.images_per_epoch = s.steps_per_epoch * accumulation * c.data.batch_size * world_.size();
  s.schedule = std::make_unique<LearningRateSchedule>(c.scheduler, c.optimizer.lr, s.steps_per_epoch, c.train.epochs);

  s.train_params = s.train->augment_params(c.data.augment, c.train.seed, c.data.normalize);
  s.test_params = s.test->augment_params(0, false, 0, c.data.normalize);
  s.test_params.train = false;
  s.eval_options = eval_options(c);

  std::vector<at::Tensor> extra;
  if (c.train.lookahead_every > 0) {
    std::vector<at::Tensor> state;
    for (const auto& t : network_->parameters()) state.push_back(t);
    for (const auto& t : network_->buffers()) state.push_back(t);
    s.lookahead = std::make_unique<Lookahead>(state, c.train.lookahead_every, s.steps_per_epoch * c.train.epochs);
    extra = s.lookahead->slow();
  }
  s.resume = std::make_unique<Resume>(options_.checkpoint_path, run_fingerprint(configured_), world_,
                                      CheckpointedState{*network_, *s.optimizer, *s.scaler, device_, extra,
                                                        c.train.seed, [&s] {
                                                          if (s.fused) s.fused->store_step_counts();
                                                        }},
                                      s.checkpoint_policy, std::move(s.resume_from));
  s.profiler = std::make_unique<OpProfiler>(c.profile, world_.rank(), device_.is_cuda());
  out_.rank.hostname = world_.hostname();
  out_.rank.device = device_name(device_);
  out_.rank.local_rank = world_.local_rank();
  out_.rank.train_images = s.train->size();
  s.clock = make_phase_clock(device_);
  reset_peak_memory(device_);
}

// The steps of one epoch (from `start` when it is the epoch a checkpoint stopped in) and its global train
// metrics in `record`.
void Trainer::run_epoch(int epoch, const TrainingPosition& start, EpochRecord& record) {
  auto& s = *state_;
  Stopwatch clock;
  network_->train();
  const auto indices = s.sampler->epoch_indices(epoch).to(device_);
  s.train_params.epoch = epoch;
  // The epoch's last step's rate, also when a run resumed after that step trains none of this epoch.
  s.lr = s.schedule->at(static_cast<std::int64_t>(epoch) * s.steps_per_epoch - 1);
  const bool resumed = epoch == start.epoch;
  // A checkpoint holds the interrupted epoch's sums over all ranks: rank 0 carries them into the global ones.
  const bool carries = resumed && world_.rank() == 0;
  const auto opts = at::TensorOptions().device(device_);
  EpochSums sums{at::zeros({1}, opts.dtype(at::kDouble)), at::zeros({1}, opts.dtype(at::kLong)),
                 at::full({1}, -1, opts.dtype(at::kLong)), carries ? start.loss_sum : 0.0, carries ? start.correct : 0,
                 at::full({1}, resumed ? start.loss_sum : 0.0, opts.dtype(at::kDouble))};
  const std::int64_t first = resumed ? start.step : 0;
  const auto reading = [&] {  // called at the monitor's cadence only: these are device reads
    settle_graphed_allreduces();
    return StepReading{sums.loss_sum.item<double>(), s.lr, s.engine ? s.engine->stats().wait_s : 0.0,
                       s.scaler->enabled() ? s.scaler->current_scale() : 0.0};
  };
  s.monitor->begin_epoch(epoch, first);
  for (std::int64_t step = first; step < s.steps_per_epoch; ++step, ++global_step_) {
    train_step(epoch, step, indices, sums);
    s.monitor->after_step(global_step_ + 1, step + 1, reading);
    agree_on_flags(epoch, step, sums);
  }
  if (s.lookahead && epoch == config_.train.epochs) s.lookahead->finish();  // the run ends on the slow weights
  settle_graphed_allreduces();
  synchronize(device_);
  record.epoch_time_s = clock.seconds();

  const std::int64_t per_step = std::int64_t{config_.train.accumulation_steps} * config_.data.batch_size;
  const double own_images = static_cast<double>(std::max<std::int64_t>(1, (s.steps_per_epoch - first) * per_step));
  double sums_host[3] = {sums.loss_sum.item<double>(), static_cast<double>(sums.correct.item<std::int64_t>()),
                         static_cast<double>(s.steps_per_epoch * per_step)};  // over all ranks: the whole epoch
  double bad = static_cast<double>(sums.first_bad.item<std::int64_t>());
  out_.rank.train_loss = sums_host[0] / own_images;  // this rank's own batches, before the sums become global
  out_.rank.train_acc = sums_host[1] / own_images;
  sums_host[0] += sums.carried_loss;
  sums_host[1] += static_cast<double>(sums.carried_correct);
  {
    const CollectiveLabel label("epoch metrics");
    world_.allreduce_sum(sums_host, 3);
    bad = world_.allreduce_max(bad);
  }
  require_finite_loss(bad, epoch);
  if (s.reproducible) sums_host[0] = sums.exact_loss.item<double>();  // already over all ranks, in a fixed order
  record.epoch = epoch;
  record.train_loss = sums_host[0] / sums_host[2];
  record.train_acc = sums_host[1] / sums_host[2];
  record.lr = s.lr;
  record.images_per_s = static_cast<double>(s.images_per_epoch) / record.epoch_time_s;
}

// One optimizer step (eager or replayed from its CUDA graph), then lookahead's pull and the test aids.
void Trainer::train_step(int epoch, std::int64_t step, const at::Tensor& indices, EpochSums& sums) {
  auto& s = *state_;
  const StepSyncCheck no_host_sync(device_, global_step_);  // a test aid: see train/sync_check.h
  s.lr = s.schedule->at(global_step_);
  set_learning_rate(*s.optimizer, s.groups, s.lr, epoch);
  if (s.graphed)
    graphed_step(epoch, step, indices, sums);
  else
    eager_step(epoch, step, indices, sums);
  s.clock->begin();
  if (s.lookahead) s.lookahead->after_step(global_step_ + 1);
  plant_test_nan(global_step_ + 1, *network_, *s.optimizer);
  s.clock->end(Phase::kOptimizer);
  s.profiler->step();
  const int verify = config_.distributed.verify_replicas;
  if (verify > 0 && (global_step_ + 1) % verify == 0) {
    settle_graphed_allreduces();
    check_replicas(s.parameters, world_, global_step_ + 1);
  }
}

// accumulation_steps micro-batches of forward and backward, the all-reduce still in flight collected, then
// the (possibly skipped) optimizer step.
void Trainer::eager_step(int epoch, std::int64_t step, const at::Tensor& indices, EpochSums& sums) {
  auto& s = *state_;
  if (s.engine) s.engine->clear_gradients();
  const int accumulation = config_.train.accumulation_steps;
  for (int micro = 0; micro < accumulation; ++micro)
    forward_backward(epoch, step * accumulation + micro, micro == accumulation - 1, indices, sums);

  s.clock->begin();
  if (s.engine)
    s.engine->finish();
  else
    sums.exact_loss += s.reproducible->finish(world_);
  s.clock->end(Phase::kCommWait);
  s.clock->begin();
  {
    const TimelineSpan span(timeline_, "optimizer", "compute");
    optimizer_step();
  }
  s.clock->end(Phase::kOptimizer);
}

// train.cuda_graphs: the batch is made eagerly; forward, loss, backward (and on one rank the optimizer)
// are the graph's, one launch timed as forward. On several ranks the flat gradient is then all-reduced in
// place over NCCL on the same stream (at most GradientBuffer::kInFlight steps' all-reduces in flight) and
// the fused optimizer steps after it. The loss and correct count join the epoch's sums on the device.
void Trainer::graphed_step(int epoch, std::int64_t step, const at::Tensor& indices, EpochSums& sums) {
  auto& s = *state_;
  const auto [x, y] = micro_batch(epoch, step, indices);
  s.clock->begin();
  s.fused->load_rates();
  const StepBuffers& out = s.graphed->run(x, y);
  s.clock->end(Phase::kForward);
  if (world_.size() > 1) {
    s.clock->begin();
    s.gradients.allreduce(backend_);
    s.clock->end(Phase::kCommWait);
    s.clock->begin();
    optimizer_step();
    s.clock->end(Phase::kOptimizer);
  }
  count_batch(out.loss, out.correct, sums);
}

// train.cuda_graphs on several ranks: each step's all-reduce is left in flight and no gradient engine
// thread watches it. Before a device read, which would wait for ever behind a stalled all-reduce, the
// backend waits for them against the stall timeout: a lost rank ends the run, named, instead of hanging it.
void Trainer::settle_graphed_allreduces() {
  if (state_->graphed && world_.size() > 1) backend_.wait_in_flight();
}

// Forward under the precision's autocast and the (label-smoothed) mean loss, in the parameters' dtype;
// returns the loss and the logits.
std::pair<at::Tensor, at::Tensor> Trainer::forward_loss(const at::Tensor& x, const at::Tensor& y) {
  auto& s = *state_;
  AutocastScope autocast(device_, s.amp_dtype);
  at::Tensor logits = network_->forward(x);
  at::Tensor loss = at::cross_entropy_loss(logits.to(s.param_dtype), y, {}, at::Reduction::Mean, -100,
                                           config_.regularization.label_smoothing);
  return {std::move(loss), std::move(logits)};
}

// Batch `slot` of the epoch's order, gathered and augmented on the device (the data phase).
std::pair<at::Tensor, at::Tensor> Trainer::micro_batch(int epoch, std::int64_t slot, const at::Tensor& indices) {
  auto& s = *state_;
  const std::int64_t batch = config_.data.batch_size;
  s.clock->begin();
  const auto rows = indices.narrow(0, slot * batch, batch);
  auto xy = s.train->batch(rows, s.train_params, draw_position(epoch, slot, batch, world_.rank(), world_.size()),
                           s.param_dtype, config_.precision.channels_last);
  s.clock->end(Phase::kData);
  return {std::move(xy.first), std::move(xy.second)};
}

// A batch's mean loss and correct count into the epoch's sums, and the first non-finite loss's step, all on
// the device.
void Trainer::count_batch(const at::Tensor& loss, const at::Tensor& correct, EpochSums& sums) {
  at::NoGradGuard no_grad;
  sums.loss_sum += loss.to(at::kDouble) * static_cast<double>(config_.data.batch_size);
  sums.correct += correct;
  if (state_->dtype == at::kHalf) return;  // fp16 overflows are the scaler's business: it skips the step
  const auto bad = at::logical_and(at::logical_not(at::isfinite(loss)), sums.first_bad.lt(0));
  sums.first_bad = at::where(bad, at::full_like(sums.first_bad, global_step_), sums.first_bad);
}

// What the graph records: the gradients zeroed, forward and loss on the static batch, the loss and correct
// count into the static outputs, backward (into the flat gradient buffer) and, on one rank, the fused step
// with fp16's unscaling, skip and scale update, all decided on the device.
void Trainer::graphed_body(const StepBuffers& b) {
  auto& s = *state_;
  s.gradients.zero();
  const auto [loss, logits] = forward_loss(b.x, b.y);
  {
    at::NoGradGuard no_grad;
    b.loss.copy_(loss.detach());
    b.correct.copy_(logits.detach().argmax(1).eq(b.y).sum());
  }
  s.scaler->scale(loss * (1.0 / world_.size())).backward();  // the all-reduce sums: the mean comes from here
  if (world_.size() == 1) optimizer_step();
}

// train.cuda_graphs: every gradient a view into one float32 buffer made before any step. The config checks
// ruled out what a graph cannot replay; the number of ranks and the backend are known only here.
void Trainer::make_graphed_step() {
  auto& s = *state_;
  FT_REQUIRE(s.fused, "train.cuda_graphs needs the fused optimizer step");
  FT_REQUIRE(world_.size() == 1 || backend_.uses_device_memory(), "train.cuda_graphs on ", world_.size(),
             " ranks all-reduces GPU memory in place: it needs distributed.backend 'nccl', not '",
             config_.distributed.backend, "'");
  s.gradients = GradientBuffer(s.parameters, device_);
  s.fused->use_device_rates();
  s.graphed = std::make_unique<GraphedStep>([this](const StepBuffers& b) { graphed_body(b); });
}

// The (possibly skipped) optimizer step and the loss scale's update. Fused, an fp16 overflow skips the step
// on the device and is counted there; otherwise the overflow flag is read on the host.
void Trainer::optimizer_step() {
  auto& s = *state_;
  if (s.fused) {
    const at::Tensor skip = s.scaler->unscale_on_device(s.parameters);
    s.fused->step(skip);
    if (skip.defined()) s.skipped.add_(skip);
  } else if (s.scaler->unscale(s.parameters)) {
    s.optimizer->step();
  } else {
    ++out_.summary.skipped_steps;
  }
  s.scaler->update();
}

// The steps skipped on the device so far, moved into the summary's count (a device read).
std::int64_t Trainer::skipped_steps() {
  auto& s = *state_;
  out_.summary.skipped_steps += std::llround(s.skipped.item<double>());
  s.skipped.zero_();
  return out_.summary.skipped_steps;
}

// One micro-batch: gather and augment it, forward and loss, the running metrics, and backward (whose
// hooks hand gradients to the engine; `last` lets the engine all-reduce this time).
void Trainer::forward_backward(int epoch, std::int64_t slot, bool last, const at::Tensor& indices, EpochSums& sums) {
  auto& s = *state_;
  const std::int64_t batch = config_.data.batch_size;
  const auto [x, y] = micro_batch(epoch, slot, indices);

  s.clock->begin();
  const int accumulation = config_.train.accumulation_steps;
  if (s.reproducible) s.reproducible->begin_micro_batch(epoch, slot / accumulation, static_cast<int>(slot % accumulation));
  at::Tensor loss, logits;
  {
    const TimelineSpan span(timeline_, "forward", "compute");
    std::tie(loss, logits) = forward_loss(x, y);
  }
  count_batch(loss.detach(), logits.detach().argmax(1).eq(y).sum(), sums);
  s.clock->end(Phase::kForward);

  s.clock->begin();
  if (s.engine) s.engine->prepare(last);
  {
    const TimelineSpan span(timeline_, "backward", "compute");
    const double share = 1.0 / (static_cast<double>(accumulation) * world_.size());
    s.scaler->scale(loss * share).backward();
  }
  if (s.reproducible) s.reproducible->end_micro_batch(static_cast<int>(slot % accumulation), loss.detach() * batch);
  s.clock->end(Phase::kBackward);
}

// Stop requests (SIGUSR1/SIGTERM/SIGINT on any rank), rank 0's clock calling for a checkpoint
// (train.checkpoint_every_s) and non-finite losses are agreed by every rank at the same step, in one
// collective. Reading the loss flag synchronises a GPU, so there it is read every 50 steps by default
// (train.loss_check_every); a checkpoint reads it whatever the cadence, so a run that diverged since the last
// read fails instead of overwriting the last good checkpoint with its broken weights.
void Trainer::agree_on_flags(int epoch, std::int64_t step, EpochSums& sums) {
  const int every = config_.train.loss_check_every > 0 ? config_.train.loss_check_every : device_.is_cuda() ? 50 : 1;
  const bool read_flag = (step + 1) % every == 0;
  if (read_flag) settle_graphed_allreduces();
  const double every_s = config_.train.checkpoint_every_s;
  const Resume& resume = *state_->resume;
  const bool time_due =
      world_.rank() == 0 && every_s > 0 && !resume.path().empty() && resume.seconds_since_save() >= every_s;
  double flags[3] = {static_cast<double>(stop_requested_after(global_step_ + 1)),
                     read_flag ? static_cast<double>(sums.first_bad.item<std::int64_t>()) : -1.0,
                     time_due ? 1.0 : 0.0};
  {
    const CollectiveLabel label("stop, loss and checkpoint flags");
    world_.allreduce_max(flags, 3);
  }
  require_finite_loss(flags[1], epoch);
  if (flags[0] <= 0 && flags[2] <= 0) return;
  const double waited_s = resume.seconds_since_save();
  settle_graphed_allreduces();
  state_->resume->save(mid_epoch_position(epoch, step, sums, read_flag));
  const std::string& checkpoint = resume.path();
  if (flags[0] <= 0) {  // the clock's checkpoint: training goes on
    if (world_.rank() != 0) return;
    state_->monitor->clear_line();
    std::printf("checkpoint after %.0f s at epoch %d, step %lld: %s\n", waited_s, epoch,
                static_cast<long long>(step + 1), checkpoint.c_str());
    std::fflush(stdout);
    return;
  }
  throw Interrupted(cat("stopped by signal at epoch ", epoch, ", step ", step + 1,
                        checkpoint.empty() ? std::string(" (no checkpoint requested)")
                                           : cat("; checkpoint ", checkpoint)));
}

// Collective: the position after `step` of `epoch`, once the loss is known to be finite. The epoch's partial
// sums are stored over all ranks; a resumed rank 0 starts from them.
TrainingPosition Trainer::mid_epoch_position(int epoch, std::int64_t step, EpochSums& sums, bool loss_read) {
  if (!loss_read) {
    const CollectiveLabel label("loss flag before a checkpoint");
    require_finite_loss(world_.allreduce_max(static_cast<double>(sums.first_bad.item<std::int64_t>())), epoch);
  }
  synchronize(device_);
  double partial[2] = {sums.loss_sum.item<double>() + sums.carried_loss,
                       static_cast<double>(sums.correct.item<std::int64_t>() + sums.carried_correct)};
  {
    const CollectiveLabel label("partial epoch metrics");
    world_.allreduce_sum(partial, 2);
  }
  if (state_->reproducible) partial[0] = sums.exact_loss.item<double>();
  TrainingPosition position = position_at(epoch, step + 1, partial[0], static_cast<std::int64_t>(partial[1]));
  position.global_step = global_step_ + 1;  // the step just taken (the loop counts it after this call)
  return position;
}

// Rank 0 records what the results file keeps of the state after the epoch: digests of the weights (after
// any averaging of BatchNorm statistics) and of the optimizer's state.
void Trainer::record_digests(EpochRecord& record) {
  if (world_.rank() != 0) return;
  auto& s = *state_;
  if (s.fused) s.fused->store_step_counts();
  record.weights_digest = weights_digest(*network_);
  record.optimizer_digest = optimizer_digest(*s.optimizer);
}

// Every rank evaluated the same network on the whole test split (the figures are reduced): the same verdict.
void Trainer::require_finite_test_loss(const EpochRecord& record) const {
  if (!record.evaluated || std::isfinite(record.test_loss)) return;
  throw SharedError(cat("non-finite test loss after epoch ", record.epoch, " with precision ", config_.precision.dtype,
                        ": the epoch's checkpoint is not written and the last good one (if any) is kept; lower "
                        "optimizer.lr or check the data"));
}

void Trainer::require_finite_loss(double first_bad_step, int epoch) const {
  FT_REQUIRE(first_bad_step < 0, "non-finite training loss at optimizer step ",
             static_cast<std::int64_t>(first_bad_step), " (epoch ", epoch, ") with precision ",
             config_.precision.dtype, ": lower optimizer.lr or check the data; the last checkpoint (if any) is kept");
}

// The test loss and accuracy, on the epochs train.eval_every names and the last.
void Trainer::evaluate_into(EpochRecord& record) {
  if (record.epoch % config_.train.eval_every != 0 && record.epoch != config_.train.epochs) return;
  auto& s = *state_;
  const Stopwatch wall;  // evaluate() ends with its figures on the host: the device work is done by then
  s.clock->begin();
  if (!s.reproducible) average_running_statistics(*network_, world_);  // reproducible: equal on every rank
  const auto result = s.reproducible ? evaluate_in_fixed_batches(*network_, *s.test, s.test_params, s.eval_options, world_)
                                     : evaluate(*network_, *s.test, s.test_params, s.eval_options, world_);
  s.clock->end(Phase::kEval);
  s.eval_wall_s += wall.seconds();
  record.test_loss = result.loss;
  record.test_acc = result.accuracy;
  record.evaluated = true;
  keep_own_figures(record.epoch, result);
}

// This rank's own train and test figures of an evaluated epoch (before the all-reduce), as a DistributedSampler
// run's rank reports them: kept for the rank record and gathered from every rank for the epoch table.
void Trainer::keep_own_figures(int epoch, const EvalResult& result) {
  out_.rank.test_images = result.own_images;
  out_.rank.test_loss = result.own_loss;
  out_.rank.test_acc = result.own_accuracy;
  const RankEpochRecord mine{world_.rank(), epoch, out_.rank.train_loss, out_.rank.train_acc, result.own_loss,
                             result.own_accuracy};
  const CollectiveLabel label("per-rank epoch metrics");
  for (const auto& row : gather_rank_epochs(world_, {mine})) out_.rank_epochs.push_back(row);
}

// Rank 0 prints the epoch's global line, after every rank's own line in rank order when there are several.
void Trainer::print_epoch(const EpochRecord& record) const {
  if (world_.rank() != 0) return;
  if (record.evaluated && world_.size() > 1) print_rank_lines(record.epoch);
  std::printf("epoch %3d/%d  train loss %.4f acc %6.2f%%", record.epoch, config_.train.epochs, record.train_loss,
              100 * record.train_acc);
  if (record.evaluated) std::printf("  test loss %.4f acc %6.2f%%", record.test_loss, 100 * record.test_acc);
  std::printf("  lr %.5f  %.2fs  %.0f img/s\n", record.lr, record.epoch_time_s, record.images_per_s);
  std::fflush(stdout);
}

// Every rank's own figures of `epoch`, one line each, as the per-process logs of a DistributedSampler run read.
void Trainer::print_rank_lines(int epoch) const {
  for (const auto& r : out_.rank_epochs) {
    if (r.epoch != epoch) continue;
    std::printf("Rank %d, Epoch [%d/%d], Train Loss: %.4f, Train Acc: %.2f%%, Test Loss: %.4f, Test Acc: %.2f%%\n",
                r.rank, r.epoch, config_.train.epochs, r.train_loss, 100 * r.train_acc, r.test_loss,
                100 * r.test_acc);
  }
}

// The run's summary and this rank's statistics. The wall time is the whole run's, every segment's summed;
// training time and throughput count only this segment (a resumed run started mid-way), and throughput
// leaves evaluation time out.
void Trainer::summarise(const Stopwatch& training, std::size_t resumed_epochs) {
  auto& s = *state_;
  auto& summary = out_.summary;
  summary.train_time_s = training.seconds();
  summary.wall_time_s = 0;
  for (const auto& segment : out_.segments) summary.wall_time_s += segment.wall_time_s;
  summary.epochs_run = static_cast<int>(out_.epochs.size());
  summary.optimizer_steps = global_step_;
  summary.skipped_steps = skipped_steps();
  const double trained_images =
      static_cast<double>(s.images_per_epoch) * static_cast<double>(out_.epochs.size() - resumed_epochs);
  for (const auto& e : out_.epochs) {
    if (e.evaluated && e.test_acc > summary.best_test_acc) summary.best_test_acc = e.test_acc, summary.best_epoch = e.epoch;
    if (e.evaluated) summary.final_test_acc = e.test_acc, summary.final_test_loss = e.test_loss;
  }
  const PhaseTimes& phases = s.clock->totals();
  // Host seconds from host seconds: the phase clock's evaluation time is device time on a GPU.
  const double eval_time = world_.allreduce_max(s.eval_wall_s);
  summary.images_per_s = trained_images / std::max(1e-9, summary.train_time_s - eval_time);
  summary.overfit_epoch = overfitting_onset(out_.epochs, config_.regularization.overfit_window);
  summary.overfit = summary.overfit_epoch > 0;
  summary.peak_memory_bytes = peak_memory_bytes(device_);

  for (std::size_t k = 0; k < kRankPhases; ++k) out_.rank.phase_s[k] = phases.seconds[k];
  out_.rank.phase_clock = phase_clock_name(s.clock->kind());
  out_.rank.peak_memory_bytes = summary.peak_memory_bytes;
  out_.rank.peak_allocated_bytes = peak_allocated_bytes(device_);
  const EngineStats engine = s.engine ? s.engine->stats() : EngineStats{};
  out_.rank.allreduce_bytes = engine.bytes;
  out_.rank.allreduce_s = engine.allreduce_s;
  out_.rank.comm_hidden_fraction = engine.hidden_fraction();
}

}  // namespace ft
