// The training loop. Every rank executes the same number of optimizer steps and the same collectives
// in the same order; all per-epoch metrics are reduced globally, so every rank takes the same decisions
// (early stopping, errors) and rank 0 only has to print and write them.
#include "train/trainer.h"

#include <algorithm>
#include <cstdio>
#include <memory>
#include <utility>

#include "comm/backend.h"
#include "comm/stall_inspector.h"
#include "config/fingerprint.h"
#include "config/loader.h"
#include "data/sampler.h"
#include "engine/replica_check.h"
#include "history/history.h"
#include "monitor/memory.h"
#include "monitor/op_profiler.h"
#include "monitor/training_monitor.h"
#include "results/rank_gather.h"
#include "runtime/error.h"
#include "runtime/signals.h"
#include "runtime/world.h"
#include "device/device_setup.h"
#include "train/epoch_report.h"
#include "evaluation/evaluation.h"
#include "optim/fused_step.h"
#include "train/batch_norm_sync.h"
#include "train/make_step.h"
#include "train/replica.h"
#include "train/run_length.h"
#include "train/warm_up.h"
#include "checkpoint/resume.h"
#include "monitor/process_clock.h"

namespace ft {

// What run() builds before the first step: the data, the parts every step shares and the one step the config
// asks for, the epoch's order and the run's checkpoints, clocks and monitor.
struct Trainer::State {
  RankSplits splits;
  at::ScalarType dtype = at::kFloat, param_dtype = at::kFloat, amp_dtype = at::kFloat;
  // The enqueue order of the two communicators on a device (the engine's and model.sync_batchnorm's over NCCL).
  std::unique_ptr<CollectiveOrder> collective_order;
  std::unique_ptr<BatchNormSyncing> norm_sync;  // model.sync_batchnorm's attachment, undone with the state
  std::unique_ptr<StepParts> parts;
  std::unique_ptr<TrainingStep> step;
  std::vector<at::Tensor> replica;  // what distributed.verify_replicas compares across ranks
  std::unique_ptr<Sampler> sampler;
  std::unique_ptr<Resume> resume;
  CheckpointPolicy checkpoint_policy;  // how many checkpoints to keep, and what to do when all are damaged
  ResumeSource resume_from;  // the checkpoint file this run starts from, until `resume` takes it
  std::unique_ptr<OpProfiler> profiler;  // per-operator trace of a window of steps (profile.*)
  AugmentParams train_params, test_params;
  EvalOptions eval_options;
  std::int64_t steps_per_epoch = 0, images_per_epoch = 0;
  RunLength length;  // the epochs and the steps of each (train.max_steps may cut the last short)
  std::unique_ptr<PhaseClock> clock;  // per-phase times: host clock on CPUs, CUDA events on GPUs
  std::unique_ptr<TrainingMonitor> monitor;  // rank 0's TensorBoard event file and progress line
  double eval_wall_s = 0;  // evaluation on the host clock (that of the training time it is taken from)
  double warmup_s = 0;     // train.warmup_steps' steps and the restore, before every clock
  double last_epoch_end = -1;  // seconds since the process started, at the end of the last epoch's steps
};

Trainer::Trainer(const Config& config, const World& world, Backend& backend, at::Device device, TrainerOptions options)
    : configured_(config), config_(config), world_(world), backend_(backend), device_(device), options_(std::move(options)),
      timeline_(options_.timeline) {}

Trainer::~Trainer() = default;

TrainOutcome Trainer::run() {
  state_ = std::make_unique<State>();
  // The step, optimizer and data live for one run: released on return and when an error unwinds.
  struct Release {
    std::unique_ptr<State>& state;
    ~Release() { state.reset(); }
  } released{state_};
  out_ = TrainOutcome{};
  plan_segment();
  build_replica();
  make_step();
  plan_steps();
  TrainingPosition start = state_->resume->start();
  out_.epochs = start.history;
  out_.rank_epochs = start.rank_history;
  out_.segments = start.segments;
  out_.segments.push_back(plan_.segment);
  state_->step->count_skipped_from(start.skipped_steps);
  global_step_ = start.global_step;
  if (start.step != plan_.segment.start_step) {  // another global batch: the schedule follows the epoch's steps
    start.step = plan_.segment.start_step;
    global_step_ = (start.epoch - 1) * state_->steps_per_epoch + start.step;
  }
  warm_up_before_clocks(start);  // before the monitor: it keeps the fresh phase clock the warm-up leaves
  const MonitorSetup watched{world_.rank(), device_, options_.checkpoint_path, state_->steps_per_epoch,
                             state_->images_per_epoch / state_->steps_per_epoch,
                             std::int64_t{config_.train.accumulation_steps} * config_.data.batch_size, global_step_,
                             dump_config(configured_), state_->clock.get()};
  state_->monitor = std::make_unique<TrainingMonitor>(config_, watched);

  world_.barrier();
  Stopwatch training;
  for (int epoch = start.epoch; epoch <= config_.train.epochs; ++epoch) {
    EpochRecord record;
    run_epoch(epoch, start, record);
    evaluate_into(record);
    StepParts& parts = *state_->parts;
    if (world_.rank() == 0) record_digests(record, *network_, *parts.optimizer, parts.fused.get());
    out_.epochs.push_back(record);
    state_->monitor->end_epoch(global_step_, record, out_.rank_epochs);
    if (world_.rank() == 0) print_epoch(record, out_.rank_epochs, config_.train.epochs, world_.size());
    if (config_.train.checkpoint_every > 0 && epoch % config_.train.checkpoint_every == 0 &&
        epoch < config_.train.epochs) {
      require_finite_test_loss(record, config_.precision.dtype);
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
  p.skipped_steps = state_->step->skipped_steps();
  p.history = out_.epochs;
  p.rank_history = out_.rank_epochs;
  p.segments = out_.segments;
  return p;
}


// This rank's slices of the splits on the device and the network, identical on every rank.
void Trainer::build_replica() {
  auto& s = *state_;
  s.splits = load_rank_splits(config_, world_, device_);
  out_.data = s.splits.meta;
  s.dtype = training_dtype(config_.precision.dtype);
  s.param_dtype = s.dtype == at::kDouble ? at::kDouble : at::kFloat;
  s.amp_dtype = (s.dtype == at::kHalf || s.dtype == at::kBFloat16) ? s.dtype : at::kFloat;
  network_ = ft::build_replica(config_, *s.splits.train, world_, device_, s.param_dtype);
  if (config_.model.sync_batchnorm && world_.size() > 1 && backend_.uses_device_memory())
    s.collective_order = std::make_unique<CollectiveOrder>(config_.distributed.stall_timeout_s);
  s.norm_sync = std::make_unique<BatchNormSyncing>(config_, world_, *network_, device_, options_.norm_backend,
                                                   s.collective_order.get());
}

// The optimizer with its parameter groups, the fp16 loss scaler and the fused step, then the one kind of
// step the config asks for.
void Trainer::make_step() {
  auto& s = *state_;
  s.parts = std::make_unique<StepParts>(StepParts{config_, world_, backend_, *network_, device_, timeline_});
  s.parts->collective_order = s.collective_order.get();
  StepParts& p = *s.parts;
  std::vector<NamedTensor> named;
  std::vector<std::pair<std::string, at::Tensor>> all_named;
  for (const auto& item : network_->named_parameters()) {
    all_named.emplace_back(item.key(), item.value());
    if (!item.value().requires_grad()) continue;  // frozen: neither all-reduced nor optimised
    named.push_back({item.key(), item.value()});
    p.parameters.push_back(item.value());
  }
  p.train = s.splits.train.get();
  p.train_params = &s.train_params;
  p.dtype = s.dtype, p.param_dtype = s.param_dtype, p.amp_dtype = s.amp_dtype;
  p.groups = group_parameters(all_named, network_->parameter_rules(), config_.optimizer);
  p.optimizer = make_optimizer(config_.optimizer, p.groups);
  const auto& precision = config_.precision;
  p.scaler = std::make_unique<LossScaler>(s.dtype == at::kHalf, precision.initial_scale, precision.growth_interval,
                                          device_, precision.half_weights);
  p.fused = FusedStep::make(*p.optimizer, config_.optimizer, device_);
  s.step = make_training_step(p, named, out_.summary, options_.record_graphs);
  s.replica = s.norm_sync->replica_tensors(p.parameters);
}

// Steps per epoch (equal on every rank), the schedule, augmentation and evaluation settings, lookahead
// and the checkpoint this run resumes from and saves to.
void Trainer::plan_steps() {
  auto& s = *state_;
  auto& p = *s.parts;
  const auto& c = config_;
  const DeviceDataset& train = *s.splits.train;
  SamplerSetup setup;
  setup.shuffle = c.data.shuffle;
  setup.remainder = c.data.remainder;
  setup.local_size = train.size();
  double extent[2] = {-static_cast<double>(train.size()), static_cast<double>(train.size())};
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
  s.length = RunLength::of(c.train, s.steps_per_epoch);
  config_.train.epochs = s.length.epochs;  // train.max_steps: the epoch its last step falls in
  p.schedule = std::make_unique<LearningRateSchedule>(c.scheduler, c.optimizer.lr, s.steps_per_epoch, c.train.epochs,
                                                      s.length.total_steps);

  s.train_params = train.augment_params(c.data.augment, c.train.seed, c.data.normalize);
  s.test_params = s.splits.test->augment_params(0, false, 0, c.data.normalize);
  s.test_params.train = false;
  s.eval_options = eval_options(c);

  std::vector<at::Tensor> extra;
  if (c.train.lookahead_every > 0) {
    std::vector<at::Tensor> state;
    for (const auto& t : network_->parameters()) state.push_back(t);
    for (const auto& t : network_->buffers()) state.push_back(t);
    p.lookahead = std::make_unique<Lookahead>(state, c.train.lookahead_every, s.length.total_steps);
    extra = p.lookahead->slow();
  }
  StepState kept = s.step->checkpointed_state();  // e.g. PowerSGD's factors and error feedback
  extra.insert(extra.end(), kept.shared.begin(), kept.shared.end());
  s.resume = std::make_unique<Resume>(options_.checkpoint_path, run_fingerprint(configured_), world_,
                                      CheckpointedState{*network_, *p.optimizer, *p.scaler, device_, extra,
                                                        c.train.seed,
                                                        [&p] {
                                                          if (p.fused) p.fused->store_step_counts();
                                                        },
                                                        std::move(kept.own)},
                                      s.checkpoint_policy, std::move(s.resume_from));
  s.profiler = std::make_unique<OpProfiler>(c.profile, world_.rank(), device_.is_cuda());
  out_.rank.hostname = world_.hostname();
  out_.rank.device = device_name(device_);
  out_.rank.local_rank = world_.local_rank();
  out_.rank.train_images = train.size();
  s.clock = make_phase_clock(device_);
  p.clock = s.clock.get();
  reset_peak_memory(device_);
}

// train.warmup_steps before the clocks start: the steps this segment begins with, on state then put back, and
// a fresh phase clock after them.
void Trainer::warm_up_before_clocks(const TrainingPosition& start) {
  auto& s = *state_;
  const int steps = config_.train.warmup_steps;
  if (steps == 0) return;
  const Stopwatch wall;
  const auto indices = s.sampler->epoch_indices(start.epoch).to(device_);
  warm_up(*s.step, steps, WarmUpAt{start.epoch, start.step, s.steps_per_epoch, global_step_}, indices);
  s.clock = make_phase_clock(device_);
  s.parts->clock = s.clock.get();
  s.warmup_s = wall.seconds();
  out_.summary.warmup_steps = steps;
}

// The steps of one epoch (from `start` when it is the epoch a checkpoint stopped in) and its global train
// metrics in `record`.
void Trainer::run_epoch(int epoch, const TrainingPosition& start, EpochRecord& record) {
  auto& s = *state_;
  TrainingStep& step = *s.step;
  Stopwatch clock;
  network_->train();
  const auto indices = s.sampler->epoch_indices(epoch).to(device_);
  s.train_params.epoch = epoch;
  const bool resumed = epoch == start.epoch;
  // A checkpoint holds the interrupted epoch's sums over all ranks: rank 0 carries them into the global ones.
  const bool carries = resumed && world_.rank() == 0;
  const auto opts = at::TensorOptions().device(device_);
  EpochSums sums{at::zeros({1}, opts.dtype(at::kDouble)), at::zeros({1}, opts.dtype(at::kLong)),
                 at::full({1}, -1, opts.dtype(at::kLong)), carries ? start.loss_sum : 0.0, carries ? start.correct : 0,
                 at::full({1}, resumed ? start.loss_sum : 0.0, opts.dtype(at::kDouble))};
  const std::int64_t first = resumed ? start.step : 0;
  const std::int64_t steps = s.length.steps_in(epoch);
  const auto reading = [&] {  // called at the monitor's cadence only: these are device reads
    step.settle();
    return StepReading{sums.loss_sum.item<double>(), step.lr(), step.comm_wait_s(),
                       s.parts->scaler->enabled() ? s.parts->scaler->current_scale() : 0.0};
  };
  s.monitor->begin_epoch(epoch, first);
  for (std::int64_t k = first; k < steps; ++k, ++global_step_) {
    step.run(StepAt{epoch, k, global_step_}, indices, sums);
    s.profiler->step();
    const int verify = config_.distributed.verify_replicas;
    if (verify > 0 && (global_step_ + 1) % verify == 0) {
      step.settle();
      check_replicas(s.replica, world_, global_step_ + 1);
    }
    s.monitor->after_step(global_step_ + 1, k + 1, reading);
    agree_on_flags(epoch, k, sums);
  }
  if (s.parts->lookahead && epoch == config_.train.epochs) s.parts->lookahead->finish();  // ends on the slow weights
  step.settle();
  synchronize(device_);
  record.epoch_time_s = clock.seconds();
  s.last_epoch_end = seconds_since_process_start();

  const std::int64_t per_step = std::int64_t{config_.train.accumulation_steps} * config_.data.batch_size;
  const double own_images = static_cast<double>(std::max<std::int64_t>(1, (steps - first) * per_step));
  double sums_host[3] = {sums.loss_sum.item<double>(), static_cast<double>(sums.correct.item<std::int64_t>()),
                         static_cast<double>(steps * per_step)};  // over all ranks: the whole epoch
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
  require_finite_loss(bad, epoch, config_.precision.dtype);
  record.epoch = epoch;
  record.train_loss = step.epoch_loss_sum(sums, sums_host[0]) / sums_host[2];
  record.train_acc = sums_host[1] / sums_host[2];
  // The epoch's last step's rate, also when a run resumed after that step trains none of this epoch.
  record.lr = s.parts->schedule->at(static_cast<std::int64_t>(epoch - 1) * s.steps_per_epoch + steps - 1);
  record.images_per_s = static_cast<double>(s.images_per_epoch / s.steps_per_epoch * steps) / record.epoch_time_s;
}

// Stop requests (SIGUSR1/SIGTERM/SIGINT on any rank), rank 0's clock calling for a checkpoint
// (train.checkpoint_every_s) and non-finite losses are agreed by every rank at the same step, in one
// collective. Reading the loss flag synchronises a GPU, so there it is read every 50 steps by default
// (train.loss_check_every); a checkpoint reads it whatever the cadence, so a run that diverged since the last
// read fails instead of overwriting the last good checkpoint with its broken weights.
void Trainer::agree_on_flags(int epoch, std::int64_t step, EpochSums& sums) {
  const int every = config_.train.loss_check_every > 0 ? config_.train.loss_check_every : device_.is_cuda() ? 50 : 1;
  const bool read_flag = (step + 1) % every == 0;
  if (read_flag) state_->step->settle();
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
  require_finite_loss(flags[1], epoch, config_.precision.dtype);
  if (flags[0] <= 0 && flags[2] <= 0) return;
  const double waited_s = resume.seconds_since_save();
  state_->step->settle();
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
    require_finite_loss(world_.allreduce_max(static_cast<double>(sums.first_bad.item<std::int64_t>())), epoch,
                        config_.precision.dtype);
  }
  synchronize(device_);
  double partial[2] = {sums.loss_sum.item<double>() + sums.carried_loss,
                       static_cast<double>(sums.correct.item<std::int64_t>() + sums.carried_correct)};
  {
    const CollectiveLabel label("partial epoch metrics");
    world_.allreduce_sum(partial, 2);
  }
  const double loss_sum = state_->step->epoch_loss_sum(sums, partial[0]);
  TrainingPosition position = position_at(epoch, step + 1, loss_sum, static_cast<std::int64_t>(partial[1]));
  position.global_step = global_step_ + 1;  // the step just taken (the loop counts it after this call)
  return position;
}

// The test loss and accuracy, on the epochs train.eval_every names and the last; this rank's own figures
// (before the all-reduce, as a DistributedSampler run's rank reports them) kept and gathered from every rank.
void Trainer::evaluate_into(EpochRecord& record) {
  if (record.epoch % config_.train.eval_every != 0 && record.epoch != config_.train.epochs) return;
  auto& s = *state_;
  const bool reproducible = config_.distributed.reproducible;  // its statistics are equal on every rank
  const Stopwatch wall;  // evaluate() ends with its figures on the host: the device work is done by then
  s.clock->begin();
  if (!reproducible && !s.norm_sync->on()) average_running_statistics(*network_, world_);  // else already equal
  const auto result = reproducible
                          ? evaluate_in_fixed_batches(*network_, *s.splits.test, s.test_params, s.eval_options, world_)
                          : evaluate(*network_, *s.splits.test, s.test_params, s.eval_options, world_);
  s.clock->end(Phase::kEval);
  s.eval_wall_s += wall.seconds();
  record.test_loss = result.loss;
  record.test_acc = result.accuracy;
  record.evaluated = true;
  out_.rank.test_images = result.own_images;
  out_.rank.test_loss = result.own_loss;
  out_.rank.test_acc = result.own_accuracy;
  const RankEpochRecord mine{world_.rank(), record.epoch, out_.rank.train_loss, out_.rank.train_acc,
                             result.own_loss, result.own_accuracy};
  const CollectiveLabel label("per-rank epoch metrics");
  for (const auto& row : gather_rank_epochs(world_, {mine})) out_.rank_epochs.push_back(row);
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
  s.step->summarise(summary, out_.rank);
  record_straggler(world_, s.monitor->step_windows(), config_.distributed.straggler_share, summary, out_.rank);
  const double images_per_step = static_cast<double>(s.images_per_epoch / s.steps_per_epoch);
  double trained_images = 0;
  for (std::size_t e = resumed_epochs; e < out_.epochs.size(); ++e)
    trained_images += images_per_step * static_cast<double>(s.length.steps_in(out_.epochs[e].epoch));
  for (const auto& e : out_.epochs) summary.train_steps_s += e.epoch_time_s;
  for (const auto& e : out_.epochs) {
    if (e.evaluated && e.test_acc > summary.best_test_acc) summary.best_test_acc = e.test_acc, summary.best_epoch = e.epoch;
    if (e.evaluated) summary.final_test_acc = e.test_acc, summary.final_test_loss = e.test_loss;
  }
  const PhaseTimes& phases = s.clock->totals();
  // Host seconds from host seconds: the phase clock's evaluation time is device time on a GPU.
  double slowest[2] = {s.eval_wall_s, s.last_epoch_end};
  world_.allreduce_max(slowest, 2);
  summary.images_per_s = trained_images / std::max(1e-9, summary.train_time_s - slowest[0]);
  summary.cold_s = std::max(0.0, slowest[1]);
  summary.warmup_s = s.warmup_s;
  summary.overfit_epoch = overfitting_onset(out_.epochs, config_.regularization.overfit_window);
  summary.overfit = summary.overfit_epoch > 0;
  summary.peak_memory_bytes = peak_memory_bytes(device_);

  for (std::size_t k = 0; k < kRankPhases; ++k) out_.rank.phase_s[k] = phases.seconds[k];
  out_.rank.phase_clock = phase_clock_name(s.clock->kind());
  out_.rank.peak_memory_bytes = summary.peak_memory_bytes;
  out_.rank.peak_allocated_bytes = peak_allocated_bytes(device_);
}

}  // namespace ft
