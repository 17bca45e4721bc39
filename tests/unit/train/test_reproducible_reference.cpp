// distributed.reproducible on one rank against references sharing none of its code: BatchNorm's running
// statistics computed here from the images in float64, and the default mode's loss and weights.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "comm/backend.h"
#include "data/sampler.h"
#include "io/paths.h"
#include "noise_shards.h"
#include "test_paths.h"
#include "test_world.h"
#include "train/trainer.h"

namespace ft::reproducible_reference_test {
namespace {

// The network's first layer is the BatchNorm, so its batch statistics are those of the normalised images. The
// mode's own tests compare it with itself (one rank against two or four); a slip every rank count shares passes
// those and fails these.

constexpr std::int64_t kImages = 32;  // training images
constexpr int kChannels = 3;
const test::NoiseSet kSet{kImages, 8, 6, kChannels, 4, {0.4, 0.5, 0.6}, {0.2, 0.25, 0.3}};

using Shards = test::NoiseShards;

Shards shards() {
  return test::noise_shards(kSet, ft::test::temp_dir() + "/reproducible-reference-" +
                                      ::testing::UnitTest::GetInstance()->current_test_info()->name());
}

// BatchNorm on the images, then a linear classifier; no dropout, no augmentation; float64.
Config config_of(const std::string& data, bool reproducible, int micro_batches) {
  Config c;
  c.model.name = ModelName::conv_stack;
  LayerSpec bn, linear;
  bn.type = LayerType::bn;
  linear.type = LayerType::linear;
  c.model.layers = {bn, linear};
  c.data.path = data;
  c.data.shuffle = Shuffle::global;
  c.data.batch_size = static_cast<int>(kImages / micro_batches);  // one optimizer step an epoch
  c.optimizer.name = OptimizerName::sgd;
  c.optimizer.lr = 0.1;
  c.optimizer.momentum = 0.9;
  c.precision.dtype = Precision::fp64;
  c.train.epochs = 3;
  c.train.threads = 1;
  c.train.seed = 5;
  c.train.device = DeviceChoice::cpu;
  c.distributed.reproducible = reproducible;
  c.distributed.micro_batches = micro_batches;
  c.train.accumulation_steps = reproducible ? 1 : micro_batches;
  return c;
}

struct Trained {
  TrainOutcome outcome;
  std::vector<at::Tensor> weights;
  at::Tensor running_mean, running_var;
};

Trained train(const Config& c) {
  auto& world = test::world();
  auto backend = make_backend(world, BackendOptions{});
  Trainer trainer(c, world, *backend, at::Device(at::kCPU));
  Trained r;
  r.outcome = trainer.run();
  for (const auto& p : trainer.network()->parameters()) r.weights.push_back(p.detach().clone());
  for (const auto& item : trainer.network()->named_buffers()) {
    if (item.key().find("running_mean") != std::string::npos) r.running_mean = item.value().detach().to(at::kDouble).clone();
    if (item.key().find("running_var") != std::string::npos) r.running_var = item.value().detach().to(at::kDouble).clone();
  }
  EXPECT_TRUE(r.running_mean.defined() && r.running_var.defined()) << "the network has no BatchNorm buffers";
  return r;
}

// The training images as the network sees them; `rows` picks images in that order.
at::Tensor normalised(const Shards& s, const at::Tensor& rows) { return test::normalised_images(kSet, s.train, rows); }

// One micro-batch's batch statistics per channel: the mean, and the unbiased variance that BatchNorm's
// running estimate takes.
std::pair<at::Tensor, at::Tensor> batch_statistics(const at::Tensor& x) {
  const auto mean = x.mean({0, 2, 3});
  const double n = static_cast<double>(x.numel() / x.size(1));
  const auto var = (x - mean.view({1, -1, 1, 1})).pow(2).sum({0, 2, 3}) / (n - 1);
  return {mean, var};
}

void expect_close(const at::Tensor& got, const at::Tensor& want, double relative, const std::string& what) {
  const double off = (got - want).abs().max().item<double>();
  const double scale = std::max(1e-30, want.abs().max().item<double>());
  EXPECT_LE(off, relative * scale) << what << ": off by " << off << " (" << off / scale << " of its largest value)"
                                   << "\n  got  " << got << "\n  want " << want;
}

// `updates`: the statistics of each optimizer step (one pair per epoch, the step's only update): from the
// initial 0 and 1, each update takes running = (1 - m) running + m statistic, with BatchNorm's momentum 0.1.
std::pair<at::Tensor, at::Tensor> running_after(const std::vector<std::pair<at::Tensor, at::Tensor>>& updates) {
  constexpr double m = 0.1;
  at::Tensor mean = at::zeros({kChannels}, at::kDouble), var = at::ones({kChannels}, at::kDouble);
  for (const auto& [batch_mean, batch_var] : updates) {
    mean = (1 - m) * mean + m * batch_mean;
    var = (1 - m) * var + m * batch_var;
  }
  return {mean, var};
}

void expect_same_training(const Trained& reproducible, const Trained& plain) {
  ASSERT_EQ(reproducible.outcome.epochs.size(), plain.outcome.epochs.size());
  for (std::size_t e = 0; e < plain.outcome.epochs.size(); ++e) {
    const double want = plain.outcome.epochs[e].train_loss, got = reproducible.outcome.epochs[e].train_loss;
    EXPECT_NEAR(got, want, 1e-12 * std::abs(want)) << "epoch " << e + 1 << "'s train loss";
    EXPECT_EQ(reproducible.outcome.epochs[e].train_acc, plain.outcome.epochs[e].train_acc) << "epoch " << e + 1;
  }
  ASSERT_EQ(reproducible.weights.size(), plain.weights.size());
  for (std::size_t i = 0; i < plain.weights.size(); ++i)
    expect_close(reproducible.weights[i], plain.weights[i], 1e-12, "parameter " + std::to_string(i));
}

// One micro-batch per step, the whole training set: the step's statistics are those of all the images in any
// order, the same every epoch; the default mode takes the same single update per step.
TEST(ReproducibleReference, OneMicroBatchMatchesTheImagesAndTheDefaultMode) {
  const Shards s = shards();
  const Trained reproducible = train(config_of(s.dir, true, 1));
  const Trained plain = train(config_of(s.dir, false, 1));
  const auto all = batch_statistics(normalised(s, at::arange(kImages, at::kLong)));
  const auto [mean, var] = running_after({all, all, all});
  expect_close(reproducible.running_mean, mean, 1e-12, "reproducible running mean against the images'");
  expect_close(reproducible.running_var, var, 1e-12, "reproducible running variance against the images'");
  expect_close(plain.running_mean, mean, 1e-12, "default running mean against the images'");
  expect_close(plain.running_var, var, 1e-12, "default running variance against the images'");
  expect_same_training(reproducible, plain);
}

// Two micro-batches per step: the one update per step takes the mean of the two halves' statistics (in the
// step's global order), where the default mode takes one update per micro-batch; training itself (each
// micro-batch normalised by its own statistics, the mean gradient, the loss) is the default mode's with two
// accumulation steps.
TEST(ReproducibleReference, TwoMicroBatchesTakeOneUpdateOfTheirMeanStatistics) {
  const Shards s = shards();
  const Config c = config_of(s.dir, true, 2);
  const Trained reproducible = train(c);
  const Trained plain = train(config_of(s.dir, false, 2));
  SamplerSetup order;
  order.shuffle = Shuffle::global;
  order.local_size = kImages;
  order.batch = c.data.batch_size;
  order.seed = c.train.seed;
  const Sampler sampler(order);
  std::vector<std::pair<at::Tensor, at::Tensor>> updates;
  for (int epoch = 1; epoch <= c.train.epochs; ++epoch) {
    const at::Tensor rows = sampler.epoch_indices(epoch);
    const auto a = batch_statistics(normalised(s, rows.narrow(0, 0, c.data.batch_size)));
    const auto b = batch_statistics(normalised(s, rows.narrow(0, c.data.batch_size, c.data.batch_size)));
    updates.emplace_back((a.first + b.first) / 2, (a.second + b.second) / 2);
  }
  const auto [mean, var] = running_after(updates);
  expect_close(reproducible.running_mean, mean, 1e-12, "running mean against the micro-batches' mean statistics");
  expect_close(reproducible.running_var, var, 1e-12, "running variance against the micro-batches' mean statistics");
  // The order-free half of the check: the mean of two equal halves' means is the mean of all the images.
  const auto all = batch_statistics(normalised(s, at::arange(kImages, at::kLong)));
  expect_close(reproducible.running_mean, running_after({all, all, all}).first, 1e-12,
               "running mean against all the images' mean");
  expect_same_training(reproducible, plain);
}

}  // namespace
}  // namespace ft::reproducible_reference_test
