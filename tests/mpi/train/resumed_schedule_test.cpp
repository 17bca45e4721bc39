// A run resumed on fewer ranks (elastic.batch local) against a schedule computed in the test, not by fusetrain's
// scheduler: each step's number, learning rate (warm-up, cosine, batch ratio), lookahead pulls and the count.
#include <gtest/gtest.h>

#include <cmath>
#include <csignal>
#include <optional>

#include "checkpoint/checkpoint.h"
#include "checkpoint/checkpoint_files.h"
#include "comm/backend.h"
#include "config/fingerprint.h"
#include "optim/optimizer.h"
#include "optim/precision.h"
#include "runtime/signals.h"
#include "test_paths.h"
#include "train_fixture.h"

namespace ft::test::resumed_schedule_test {
namespace {

// The run stops after every step, each segment on a fresh trainer, and each step is read back from its
// checkpoint: the position, the optimizer's learning rate and lookahead's slow weights. The run: 192 images, 16
// per rank and step, 2 epochs, cosine with a one-epoch warm-up, lookahead every 3 steps. Its first segment runs
// on all N ranks (N x 16 images a step), the rest on rank 0 alone (16 a step, the learning rate times 1 / N).

constexpr std::int64_t kImages = 192;  // whole steps of 16 images on 1, 2, 3 and 4 ranks
constexpr int kBatch = 16, kEpochs = 2, kEvery = 3;
constexpr double kLr = 0.05, kWarmupEpochs = 1, kWarmupStart = 0.1, kMinLr = 0.001;

Config schedule_config(const std::string& data) {
  Config c = small_config(data, "mpi");
  c.data.batch_size = kBatch;
  c.train.epochs = kEpochs;
  c.train.lookahead_every = kEvery;
  c.optimizer.lr = kLr;
  c.scheduler.name = SchedulerName::cosine;
  c.scheduler.warmup_epochs = kWarmupEpochs;
  c.scheduler.warmup_start = kWarmupStart;
  c.scheduler.min_lr = kMinLr;
  c.elastic.batch = ElasticBatch::local;
  return c;
}

// The documented schedule: over `per_epoch` x kEpochs steps, a linear warm-up from base x warmup_start over
// the first warmup_epochs x per_epoch steps, then a cosine from base to min_lr that reaches min_lr on the last
// step.
double expected_lr(std::int64_t step, double base, std::int64_t per_epoch) {
  const std::int64_t total = per_epoch * kEpochs;
  const auto warmup = static_cast<std::int64_t>(std::llround(kWarmupEpochs * static_cast<double>(per_epoch)));
  if (step < warmup) {
    const double start = base * kWarmupStart;
    return start + (base - start) * static_cast<double>(step) / static_cast<double>(warmup);
  }
  const double span = static_cast<double>(std::max<std::int64_t>(1, total - warmup - 1));
  const double t = std::min(1.0, static_cast<double>(step - warmup) / span);
  return kMinLr + (base - kMinLr) * 0.5 * (1 + std::cos(3.14159265358979323846 * t));
}

// What one step left in its checkpoint.
struct Seen {
  int epoch = 0;                // where the run goes on
  std::int64_t step = 0, global_step = 0;
  double lr = 0;                // the learning rate the step trained with
  bool pulled = false;          // lookahead's slow weights moved in this step
  bool weights_are_slow = false;
};

class StepReader {
 public:
  StepReader(const Config& c, std::string path) : config_(c), path_(std::move(path)) {}
  Seen read() {
    const std::string fingerprint = run_fingerprint(config_);
    auto net = make_network(config_.model, InputShape{3, 8, 8, 4});
    net->to(at::kDouble);
    auto optimizer = make_optimizer(config_.optimizer, net->parameters());
    LossScaler scaler(false, 1.0, 100, at::kCPU);
    std::vector<at::Tensor> slow;
    for (const auto& p : net->parameters()) slow.push_back(at::zeros_like(p));
    const TrainingPosition position = load_checkpoint(path_, fingerprint, *net, *optimizer, scaler, at::kCPU, slow);
    Seen s;
    s.epoch = position.epoch;
    s.step = position.step;
    s.global_step = position.global_step;
    s.lr = optimizer->param_groups().at(0).options().get_lr();
    s.pulled = !last_slow_.empty();
    for (std::size_t i = 0; i < slow.size() && !last_slow_.empty(); ++i)
      s.pulled = s.pulled && !at::equal(slow[i], last_slow_[i]);
    if (last_slow_.empty()) s.pulled = false;
    const auto params = net->parameters();
    s.weights_are_slow = true;
    for (std::size_t i = 0; i < slow.size(); ++i) s.weights_are_slow = s.weights_are_slow && at::equal(params[i], slow[i]);
    last_slow_ = slow;
    return s;
  }
  void reset() { last_slow_.clear(); }

 private:
  Config config_;
  std::string path_;
  std::vector<at::Tensor> last_slow_;
};

// One segment of one optimizer step (a stop requested before it starts); the trainer's outcome when the run
// ended instead.
std::optional<TrainOutcome> one_step(const Config& c, const World& world, const std::string& checkpoint) {
  auto backend = make_backend(world, BackendOptions{});
  TrainerOptions options;
  options.checkpoint_path = checkpoint;
  install_stop_handlers();
  std::raise(SIGUSR1);
  Trainer trainer(c, world, *backend, at::Device(at::kCPU), options);
  try {
    TrainOutcome outcome = trainer.run();
    clear_stop_request();
    return outcome;
  } catch (const Interrupted&) {
    clear_stop_request();
    return std::nullopt;
  }
}

// `steps_before`: optimizer steps on all N ranks before the run moves to rank 0 alone.
void check_resumed_schedule(int steps_before, const char* name) {
  const World& world = test::world();
  const int n = world.size();
  const Config c = schedule_config(synthetic_shards(cat("resumed_schedule_", name), kImages, 2));
  const std::string checkpoint = cat(temp_dir(), "/resumed-schedule-", name, ".ckpt");
  if (world.rank() == 0) remove_checkpoints(checkpoint);
  world.barrier();

  const std::int64_t wide_per_epoch = kImages / (std::int64_t{kBatch} * n), narrow_per_epoch = kImages / kBatch;
  ASSERT_LE(steps_before, wide_per_epoch);
  StepReader reader(c, checkpoint);
  for (int k = 0; k < steps_before; ++k) {
    ASSERT_FALSE(one_step(c, world, checkpoint)) << "the run ended after " << k + 1 << " steps on " << n << " ranks";
    if (world.rank() != 0) continue;
    const Seen s = reader.read();
    SCOPED_TRACE(cat("step ", k, " on ", n, " ranks"));
    EXPECT_EQ(s.global_step, k + 1);
    EXPECT_NEAR(s.lr, expected_lr(k, kLr, wide_per_epoch), 1e-12);
    EXPECT_EQ(s.pulled || s.weights_are_slow, (k + 1) % kEvery == 0) << "a lookahead pull where none is due, or none";
  }
  world.barrier();
  if (world.rank() == 0) {
    // The rest on rank 0 alone: 16 images a step, the learning rate scaled by 16 / (16 N). The interrupted
    // epoch goes on from the last whole step of the new size at or before the images done, and the step's
    // number is its place in an epoch of the new size.
    World alone(MPI_COMM_SELF);
    const double base = kLr * kBatch / (static_cast<double>(kBatch) * n);
    const std::int64_t done = std::int64_t{steps_before} * kBatch * n;  // images of epoch 1 trained
    std::int64_t expected_step = steps_before == wide_per_epoch ? narrow_per_epoch : done / kBatch;
    std::int64_t steps_taken = 0;
    std::optional<TrainOutcome> outcome;
    for (int segment = 0; segment < 100 && !outcome; ++segment) {
      outcome = one_step(c, alone, checkpoint);
      if (outcome) break;
      const Seen s = reader.read();
      SCOPED_TRACE(cat("rank 0 alone, optimizer step ", expected_step, " of the new size"));
      ++steps_taken;
      EXPECT_EQ(s.global_step, expected_step + 1) << "the step's number in epochs of " << narrow_per_epoch << " steps";
      EXPECT_NEAR(s.lr, expected_lr(expected_step, base, narrow_per_epoch), 1e-12 * kLr)
          << "the learning rate of step " << expected_step;
      const bool due = (expected_step + 1) % kEvery == 0;
      EXPECT_EQ(s.pulled, due) << "lookahead " << (due ? "did not pull" : "pulled") << " after step " << expected_step;
      if (due) EXPECT_TRUE(s.weights_are_slow) << "the weights are not the slow copy after a pull";
      ++expected_step;
      // The position after the step: its epoch and the steps of that epoch done (an epoch's last step leaves
      // that epoch with all its steps done, evaluated when the run goes on).
      const std::int64_t epoch = (expected_step - 1) / narrow_per_epoch + 1;
      EXPECT_EQ(s.epoch, static_cast<int>(epoch)) << "the epoch";
      EXPECT_EQ(s.step, expected_step - (epoch - 1) * narrow_per_epoch) << "the steps done within the epoch";
    }
    ASSERT_TRUE(outcome) << "the run did not end";
    EXPECT_EQ(expected_step, narrow_per_epoch * kEpochs) << "the run ended before its last step";
    EXPECT_EQ(steps_taken, narrow_per_epoch * kEpochs - (steps_before == wide_per_epoch ? narrow_per_epoch : done / kBatch));
    EXPECT_EQ(outcome->summary.optimizer_steps, narrow_per_epoch * kEpochs)
        << "the steps the run counts, in steps of the new size";
    remove_checkpoints(checkpoint);
  }
  world.barrier();
}

// Moved to one rank in the middle of the first epoch (after its first step).
TEST(ResumedSchedule, ResizedMidEpochFollowsTheScheduleOfTheNewStepSize) { check_resumed_schedule(1, "mid"); }

// Moved to one rank at the end of the first epoch: epoch 2 starts at its first step of the new size.
TEST(ResumedSchedule, ResizedAtAnEpochsEndFollowsTheScheduleOfTheNewStepSize) {
  check_resumed_schedule(static_cast<int>(kImages / (std::int64_t{kBatch} * test::world().size())), "boundary");
}

}  // namespace
}  // namespace ft::test::resumed_schedule_test
