// The training loop. Every rank executes the same number of optimizer steps and the same collectives
// in the same order; all per-epoch metrics are reduced globally, so every rank takes the same decisions
// (early stopping, errors) and rank 0 only has to print and write them.
#include "train/trainer.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <memory>
#include <utility>

#include "comm/engine.h"
#include "comm/replica_check.h"
#include "comm/stall_inspector.h"
#include "comm/timeline.h"
#include "config/loader.h"
#include "data/dataset.h"
#include "data/sampler.h"
#include "monitor/memory.h"
#include "monitor/timer.h"
#include "runtime/error.h"
#include "runtime/signals.h"
#include "runtime/world.h"
#include "train/checkpoint.h"
#include "train/device_setup.h"
#include "train/evaluation.h"
#include "train/history.h"
#include "train/lookahead.h"
#include "train/optimizer.h"
#include "train/precision.h"
#include "train/scheduler.h"

namespace ft {
namespace {

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

}  // namespace

Trainer::Trainer(const Config& config, const World& world, Backend& backend, at::Device device, TrainerOptions options)
    : config_(config), world_(world), backend_(backend), device_(device), options_(std::move(options)),
      timeline_(options_.timeline) {}

TrainOutcome Trainer::run() {
  const auto& c = config_;
  TrainOutcome out;
  PhaseTimes phases;
  Stopwatch wall;

  // --- data: each rank loads only its slice (global shuffle: the whole split) ---
  const ShardReader train_reader(c.data.path, "train");
  const ShardReader test_reader(c.data.path, "test");
  const std::int64_t train_total = limited(train_reader.total(), c.data.limit_train);
  const std::int64_t test_total = limited(test_reader.total(), c.data.limit_test);
  FT_REQUIRE(world_.size() <= test_total, world_.size(), " ranks but the test split has only ", test_total,
             " images: use fewer ranks");
  const bool global = c.data.shuffle == "global";
  const auto train_range = global ? std::pair<std::int64_t, std::int64_t>{0, train_total}
                                   : slice_of(train_total, world_.rank(), world_.size());
  const auto test_range = slice_of(test_total, world_.rank(), world_.size());
  std::unique_ptr<DeviceDataset> train, test;
  {
    const HostSplit host_train = train_reader.read(train_range.first, train_range.second);
    const HostSplit host_test = test_reader.read(test_range.first, test_range.second);
    FT_REQUIRE(host_test.meta.height == host_train.meta.height && host_test.meta.width == host_train.meta.width &&
                   host_test.meta.channels == host_train.meta.channels,
               "data.path ", c.data.path, ": test images are ", host_test.meta.height, "x", host_test.meta.width,
               "x", host_test.meta.channels, " but train images are ", host_train.meta.height, "x",
               host_train.meta.width, "x", host_train.meta.channels);
    train = std::make_unique<DeviceDataset>(host_train, device_);
    test = std::make_unique<DeviceDataset>(host_test, device_);
  }
  out.data = train_reader.meta();
  const auto& meta = train->meta();

  // --- model, identical on every rank ---
  const InputShape shape{meta.channels, meta.height, meta.width, static_cast<int>(meta.class_names.size())};
  const at::ScalarType dtype = training_dtype(c.precision.dtype);
  const at::ScalarType param_dtype = dtype == at::kDouble ? at::kDouble : at::kFloat;
  const at::ScalarType amp_dtype = (dtype == at::kHalf || dtype == at::kBFloat16) ? dtype : at::kFloat;
  at::manual_seed(c.train.seed);
  network_ = make_network(c.model, shape);
  network_->to(device_, param_dtype);
  {
    // Layers fitted to the data (fast_cifar's whitening) see un-augmented, normalised training images:
    // at most 5000, and at most 64 MiB of them. Rank 0's result is what the broadcast below keeps.
    const std::int64_t per_image = std::int64_t{meta.channels} * meta.height * meta.width * 4;
    const std::int64_t n =
        std::min({train->size(), std::int64_t{5000}, std::max<std::int64_t>(1, (64 << 20) / per_image)});
    auto plain = train->augment_params(0, false, 0, c.data.normalize);
    plain.train = false;
    const auto idx = at::arange(n, at::TensorOptions().dtype(at::kLong));
    at::NoGradGuard no_grad;
    network_->initialize_from_data(train->batch(idx, plain, 0, param_dtype, false).first);
  }
  if (c.precision.channels_last) {
    at::NoGradGuard no_grad;
    for (auto& p : network_->parameters())
      if (p.dim() == 4) p.set_data(p.contiguous(at::MemoryFormat::ChannelsLast));
  }
  broadcast_state(*network_, world_);

  std::vector<NamedTensor> named;
  std::vector<at::Tensor> parameters;
  std::vector<std::pair<std::string, at::Tensor>> all_named;
  for (const auto& item : network_->named_parameters()) {
    all_named.emplace_back(item.key(), item.value());
    if (!item.value().requires_grad()) continue;  // frozen: neither all-reduced nor optimised
    named.push_back({item.key(), item.value()});
    parameters.push_back(item.value());
  }
  GradientEngineOptions engine_options;
  engine_options.bucket_mib = c.distributed.bucket_mib;
  engine_options.first_bucket_mib = c.distributed.first_bucket_mib;
  engine_options.fp16_wire = c.distributed.compression == "fp16";
  engine_options.stall_timeout_s = c.distributed.stall_timeout_s;
  engine_options.timeline = timeline_;
  // Averaging is folded into the loss (1/world below), so packing is a plain copy and no pass over
  // the gradients is spent on scaling; sums of pre-divided values cannot overflow in fp16 either.
  engine_options.average = false;
  GradientEngine engine(backend_, world_, named, engine_options);

  const std::vector<ParameterGroup> groups = group_parameters(all_named, network_->parameter_rules());
  auto optimizer = make_optimizer(c.optimizer, groups);
  LossScaler scaler(dtype == at::kHalf, c.precision.initial_scale, c.precision.growth_interval, device_);

  // --- steps: equal on every rank ---
  SamplerSetup setup;
  setup.shuffle = c.data.shuffle;
  setup.remainder = c.data.remainder;
  setup.local_size = train->size();
  double extent[2] = {-static_cast<double>(train->size()), static_cast<double>(train->size())};
  world_.allreduce_max(extent, 2);
  setup.min_local = static_cast<std::int64_t>(-extent[0]);
  setup.max_local = static_cast<std::int64_t>(extent[1]);
  setup.rank = world_.rank();
  setup.world = world_.size();
  setup.batch = c.data.batch_size;
  setup.seed = c.train.seed;
  const Sampler sampler(setup);
  const int accumulation = c.train.accumulation_steps;
  const std::int64_t steps_per_epoch = sampler.steps_per_epoch() / accumulation;
  FT_REQUIRE(steps_per_epoch > 0, "train.accumulation_steps ", accumulation, " needs at least that many batches "
             "per epoch but each rank has ", sampler.steps_per_epoch());
  const LearningRateSchedule schedule(c.scheduler, c.optimizer.lr, steps_per_epoch, c.train.epochs);

  auto train_params =
      train->augment_params(c.data.augment.crop_padding, c.data.augment.flip, c.data.augment.cutout, c.data.normalize);
  train_params.alternate_flip = c.data.augment.alternate_flip;
  train_params.image_seed = c.train.seed;
  auto test_params = test->augment_params(0, false, 0, c.data.normalize);
  test_params.train = false;
  EvalOptions eval_options;
  eval_options.batch = c.data.test_batch_size;
  eval_options.input_dtype = param_dtype;
  eval_options.amp_dtype = amp_dtype;
  eval_options.channels_last = c.precision.channels_last;
  eval_options.label_smoothing = c.regularization.label_smoothing;
  eval_options.tta = c.train.tta;

  std::unique_ptr<Lookahead> lookahead;
  if (c.train.lookahead_every > 0) {
    std::vector<at::Tensor> state;
    for (const auto& t : network_->parameters()) state.push_back(t);
    for (const auto& t : network_->buffers()) state.push_back(t);
    lookahead = std::make_unique<Lookahead>(state, c.train.lookahead_every, steps_per_epoch * c.train.epochs);
  }
  const std::vector<at::Tensor> no_extra;
  const std::vector<at::Tensor>& extra_state = lookahead ? lookahead->slow() : no_extra;
  const std::int64_t batch = c.data.batch_size;
  const std::int64_t images_per_epoch = steps_per_epoch * accumulation * batch * world_.size();

  out.rank.hostname = world_.hostname();
  out.rank.device = device_name(device_);
  out.rank.train_images = train->size();
  reset_peak_memory(device_);

  // --- resume from a checkpoint of this run, if one exists ---
  Config without_epochs = c;
  without_epochs.train.epochs = 0;
  const std::string fingerprint = dump_config(without_epochs);
  const std::string& checkpoint = options_.checkpoint_path;
  TrainingPosition position;
  if (!checkpoint.empty() && std::filesystem::exists(checkpoint)) {
    position = load_checkpoint(checkpoint, fingerprint, *network_, *optimizer, scaler, device_, extra_state);
    out.epochs = position.history;
    out.summary.skipped_steps = position.skipped_steps;
    if (world_.rank() == 0)
      std::printf("resuming from %s at epoch %d, step %lld\n", checkpoint.c_str(), position.epoch,
                  static_cast<long long>(position.step));
  }
  auto save = [&](int epoch, std::int64_t step, std::int64_t global, double loss, std::int64_t right) {
    if (checkpoint.empty() || world_.rank() != 0) return;
    TrainingPosition p{epoch, step, global, loss, right, out.summary.skipped_steps, out.epochs};
    save_checkpoint(checkpoint, fingerprint, *network_, *optimizer, scaler, p, device_, extra_state);
  };

  auto require_finite = [&](double first_bad_step, int epoch) {
    FT_REQUIRE(first_bad_step < 0, "non-finite training loss at optimizer step ",
               static_cast<std::int64_t>(first_bad_step), " (epoch ", epoch, ") with precision ", c.precision.dtype,
               ": lower optimizer.lr or check the data; the last checkpoint (if any) is kept");
  };

  // --- epochs ---
  const auto opts = at::TensorOptions().device(device_);
  std::int64_t global_step = position.global_step;
  world_.barrier();
  Stopwatch training;
  for (int epoch = position.epoch; epoch <= c.train.epochs; ++epoch) {
    Stopwatch epoch_clock;
    network_->train();
    const auto indices = sampler.epoch_indices(epoch).to(device_);
    train_params.epoch = epoch;
    const bool resumed_epoch = epoch == position.epoch;
    auto loss_sum = at::full({1}, resumed_epoch ? position.loss_sum : 0.0, opts.dtype(at::kDouble));
    auto correct = at::full({1}, resumed_epoch ? position.correct : 0, opts.dtype(at::kLong));
    auto first_bad = at::full({1}, -1, opts.dtype(at::kLong));  // first step with a non-finite loss
    double lr = 0;
    for (std::int64_t step = resumed_epoch ? position.step : 0; step < steps_per_epoch; ++step, ++global_step) {
      lr = schedule.at(global_step);
      set_learning_rate(*optimizer, groups, lr, epoch);
      engine.clear_gradients();
      for (int micro = 0; micro < accumulation; ++micro) {
        const std::int64_t slot = step * accumulation + micro;
        Stopwatch phase;
        const auto rows = indices.narrow(0, slot * batch, batch);
        const std::int64_t position = (static_cast<std::int64_t>(epoch) << 40) + slot * batch * world_.size() +
                                      static_cast<std::int64_t>(world_.rank()) * batch;
        auto [x, y] = train->batch(rows, train_params, position, param_dtype, c.precision.channels_last);
        phases.add(Phase::kData, phase.seconds());

        phase.reset();
        at::Tensor loss, logits;
        {
          const TimelineSpan span(timeline_, "forward", "compute");
          AutocastScope autocast(device_, amp_dtype);
          logits = network_->forward(x);
          loss = at::cross_entropy_loss(logits.to(param_dtype), y, {}, at::Reduction::Mean, -100,
                                        c.regularization.label_smoothing);
        }
        {
          at::NoGradGuard no_grad;
          const auto detached = loss.detach();
          loss_sum += detached.to(at::kDouble) * static_cast<double>(batch);
          correct += logits.detach().argmax(1).eq(y).sum();
          if (dtype != at::kHalf) {
            const auto bad = at::logical_and(at::logical_not(at::isfinite(detached)), first_bad.lt(0));
            first_bad = at::where(bad, at::full_like(first_bad, global_step), first_bad);
          }
        }
        phases.add(Phase::kForward, phase.seconds());

        phase.reset();
        engine.prepare(micro == accumulation - 1);
        {
          const TimelineSpan span(timeline_, "backward", "compute");
          scaler.scale(loss * (1.0 / (static_cast<double>(accumulation) * world_.size()))).backward();
        }
        phases.add(Phase::kBackward, phase.seconds());
      }
      Stopwatch phase;
      engine.finish();
      phases.add(Phase::kCommWait, phase.seconds());

      phase.reset();
      {
        const TimelineSpan span(timeline_, "optimizer", "compute");
        if (scaler.unscale(parameters))
          optimizer->step();
        else
          ++out.summary.skipped_steps;
        scaler.update();
      }
      if (lookahead) lookahead->after_step(global_step + 1);
      phases.add(Phase::kOptimizer, phase.seconds());
      if (c.distributed.verify_replicas > 0 && (global_step + 1) % c.distributed.verify_replicas == 0)
        check_replicas(parameters, world_, global_step + 1);
      // Stop requests (SIGUSR1/SIGTERM/SIGINT on any rank) and non-finite losses are agreed by every rank
      // at the same step. Reading the loss flag synchronises a GPU, so there it is read every 50 steps.
      const bool read_flag = !device_.is_cuda() || (step + 1) % 50 == 0;
      double flags[2] = {static_cast<double>(stop_requested()),
                         read_flag ? static_cast<double>(first_bad.item<std::int64_t>()) : -1.0};
      {
        const CollectiveLabel label("stop and loss flags");
        world_.allreduce_max(flags, 2);
      }
      require_finite(flags[1], epoch);
      if (flags[0] > 0) {
        synchronize(device_);
        save(epoch, step + 1, global_step + 1, loss_sum.item<double>(), correct.item<std::int64_t>());
        throw Interrupted(cat("stopped by signal at epoch ", epoch, ", step ", step + 1,
                              checkpoint.empty() ? std::string(" (no checkpoint requested)")
                                                 : cat("; checkpoint ", checkpoint)));
      }
    }
    if (lookahead && epoch == c.train.epochs) lookahead->finish();  // the run ends on the slow weights
    synchronize(device_);
    const double epoch_time = epoch_clock.seconds();

    const std::int64_t bad_step = first_bad.item<std::int64_t>();
    double sums[3] = {loss_sum.item<double>(), static_cast<double>(correct.item<std::int64_t>()),
                      static_cast<double>(steps_per_epoch * accumulation * batch)};
    double bad = static_cast<double>(bad_step);
    {
      const CollectiveLabel label("epoch metrics");
      world_.allreduce_sum(sums, 3);
      bad = world_.allreduce_max(bad);
    }
    require_finite(bad, epoch);

    EpochRecord record;
    record.epoch = epoch;
    record.train_loss = sums[0] / sums[2];
    record.train_acc = sums[1] / sums[2];
    record.lr = lr;
    record.epoch_time_s = epoch_time;
    record.images_per_s = static_cast<double>(images_per_epoch) / epoch_time;
    if (epoch % c.train.eval_every == 0 || epoch == c.train.epochs) {
      Stopwatch eval_clock;
      const auto result = evaluate(*network_, *test, test_params, eval_options, world_);
      phases.add(Phase::kEval, eval_clock.seconds());
      record.test_loss = result.loss;
      record.test_acc = result.accuracy;
      record.evaluated = true;
    }
    out.epochs.push_back(record);
    if (world_.rank() == 0) {
      std::printf("epoch %3d/%d  train loss %.4f acc %6.2f%%", epoch, c.train.epochs, record.train_loss,
                  100 * record.train_acc);
      if (record.evaluated)
        std::printf("  test loss %.4f acc %6.2f%%", record.test_loss, 100 * record.test_acc);
      std::printf("  lr %.5f  %.2fs  %.0f img/s\n", lr, epoch_time, record.images_per_s);
      std::fflush(stdout);
    }
    if (c.train.checkpoint_every > 0 && epoch % c.train.checkpoint_every == 0 && epoch < c.train.epochs)
      save(epoch + 1, 0, global_step, 0.0, 0);
    if (should_stop_early(out.epochs, c.regularization.early_stopping_patience)) {
      out.summary.stopped_early = true;
      if (world_.rank() == 0) std::printf("early stopping: no better test loss for %d epochs\n",
                                          c.regularization.early_stopping_patience);
      break;
    }
  }
  synchronize(device_);

  // --- summary ---
  auto& s = out.summary;
  s.train_time_s = training.seconds();
  s.wall_time_s = wall.seconds();
  s.epochs_run = static_cast<int>(out.epochs.size());
  s.optimizer_steps = global_step;
  // Throughput counts only the epochs trained by this process (a resumed run started mid-way).
  const double trained_images =
      static_cast<double>(images_per_epoch) * static_cast<double>(out.epochs.size() - position.history.size());
  for (const auto& e : out.epochs) {
    if (e.evaluated && e.test_acc > s.best_test_acc) s.best_test_acc = e.test_acc, s.best_epoch = e.epoch;
    if (e.evaluated) s.final_test_acc = e.test_acc, s.final_test_loss = e.test_loss;
  }
  double eval_time = phases[Phase::kEval];
  eval_time = world_.allreduce_max(eval_time);
  s.images_per_s = trained_images / std::max(1e-9, s.train_time_s - eval_time);
  s.overfit_epoch = overfitting_onset(out.epochs, c.regularization.overfit_window);
  s.overfit = s.overfit_epoch > 0;
  s.peak_memory_bytes = peak_memory_bytes(device_);

  for (std::size_t k = 0; k < kRankPhases; ++k) out.rank.phase_s[k] = phases.seconds[k];
  out.rank.peak_memory_bytes = s.peak_memory_bytes;
  out.rank.allreduce_bytes = engine.stats().bytes;
  out.rank.allreduce_s = engine.stats().allreduce_s;
  return out;
}

}  // namespace ft
