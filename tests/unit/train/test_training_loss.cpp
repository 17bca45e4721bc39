// The training and test losses a run reports against the cross-entropy worked out here from the network's own
// logits: regularization.label_smoothing at 0, 0.2 and 0.9, with accumulation, in the reproducible mode and in
// float32, so that an option that never reaches the loss cannot pass for one that does.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "comm/backend.h"
#include "noise_shards.h"
#include "test_paths.h"
#include "test_world.h"
#include "train/trainer.h"

namespace ft::training_loss_test {
namespace {

const test::NoiseSet kSet{16, 8, 4, 1, 3, {0.45}, {0.3}};

// A linear classifier on the images, one optimizer step an epoch over all of them, learning rate 0: the
// weights the run ends with are those its one step computed its loss with.
Config config_of(const std::string& data, double smoothing) {
  Config c = test::linear_sgd(data);
  c.data.shuffle = Shuffle::global;
  c.data.batch_size = static_cast<int>(kSet.train_images);
  c.data.test_batch_size = 3;  // uneven evaluation batches: the test loss is still the mean over every image
  c.optimizer.lr = 0;
  c.optimizer.momentum = 0;
  c.precision.dtype = Precision::fp64;
  c.regularization.label_smoothing = smoothing;
  c.train.epochs = 1;
  return c;
}

// Mean over the images of PyTorch's label-smoothed cross-entropy, from its definition: the target puts 1 - e on
// the label and e / K on every class, and the loss is minus the target's dot product with log softmax.
double smoothed_cross_entropy(const at::Tensor& logits, const std::vector<std::int32_t>& labels, double e) {
  const auto z = logits.to(at::kDouble).contiguous();
  const std::int64_t n = z.size(0), k = z.size(1);
  double total = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    double top = -INFINITY;
    for (std::int64_t j = 0; j < k; ++j) top = std::max(top, z[i][j].item<double>());
    double norm = 0;
    for (std::int64_t j = 0; j < k; ++j) norm += std::exp(z[i][j].item<double>() - top);
    const double log_norm = top + std::log(norm);
    double uniform = 0;
    for (std::int64_t j = 0; j < k; ++j) uniform += (log_norm - z[i][j].item<double>()) / static_cast<double>(k);
    const double label = log_norm - z[i][labels[static_cast<std::size_t>(i)]].item<double>();
    total += (1 - e) * label + e * uniform;
  }
  return total / static_cast<double>(n);
}

struct Losses {
  double train = 0, test = 0;                  // what the run reported for its epoch
  double train_reference = 0, test_reference = 0;  // worked out here from the logits of its weights
};

Losses run_and_reference(const Config& c, const test::NoiseShards& s) {
  auto& world = test::world();
  auto backend = make_backend(world, BackendOptions{});
  Trainer trainer(c, world, *backend, at::Device(at::kCPU));
  const auto outcome = trainer.run();
  EXPECT_EQ(outcome.epochs.size(), 1u);
  const auto params = trainer.network()->parameters();
  EXPECT_EQ(params.size(), 2u) << "a linear layer's weight and bias";
  const auto w = params[0].detach().to(at::kDouble), b = params[1].detach().to(at::kDouble);
  auto logits_of = [&](const std::vector<std::uint8_t>& images, std::int64_t n) {
    const auto x = test::normalised_images(kSet, images, at::arange(n, at::kLong));
    return at::matmul(x.flatten(1), w.t()) + b;  // NCHW flattened, as the layer reads it
  };
  Losses l;
  l.train = outcome.epochs[0].train_loss;
  l.test = outcome.epochs[0].test_loss;
  const double e = c.regularization.label_smoothing;
  l.train_reference = smoothed_cross_entropy(logits_of(s.train, kSet.train_images), s.train_labels, e);
  l.test_reference = smoothed_cross_entropy(logits_of(s.test, kSet.test_images), s.test_labels, e);
  return l;
}

test::NoiseShards shards() {
  return test::noise_shards(kSet, ft::test::temp_dir() + "/training-loss-" +
                                      ::testing::UnitTest::GetInstance()->current_test_info()->name());
}

void expect_losses(const Losses& l, double relative, const std::string& what) {
  EXPECT_NEAR(l.train, l.train_reference, relative * l.train_reference) << what << ": train loss";
  EXPECT_NEAR(l.test, l.test_reference, relative * l.test_reference) << what << ": test loss";
}

TEST(TrainingLoss, LabelSmoothingReachesTheTrainAndTestLoss) {
  const auto s = shards();
  for (const double e : {0.0, 0.2, 0.9}) {
    const Losses l = run_and_reference(config_of(s.dir, e), s);
    expect_losses(l, 1e-12, "smoothing " + std::to_string(e));
  }
  // The references themselves tell the settings apart: a slip that drops the smoothing is visible.
  const Losses plain = run_and_reference(config_of(s.dir, 0.0), s);
  const Losses smooth = run_and_reference(config_of(s.dir, 0.2), s);
  EXPECT_GT(std::abs(plain.train_reference - smooth.train_reference), 1e-3);
}

TEST(TrainingLoss, AccumulatedMicroBatchesAndTheReproducibleModeKeepTheSmoothedLoss) {
  const auto s = shards();
  Config accumulated = config_of(s.dir, 0.2);
  accumulated.train.accumulation_steps = 2;
  accumulated.data.batch_size /= 2;
  expect_losses(run_and_reference(accumulated, s), 1e-12, "two accumulation steps");
  Config reproducible = config_of(s.dir, 0.2);
  reproducible.distributed.reproducible = true;
  reproducible.distributed.micro_batches = 2;
  reproducible.data.batch_size /= 2;
  expect_losses(run_and_reference(reproducible, s), 1e-12, "reproducible, two micro-batches");
}

TEST(TrainingLoss, Float32KeepsTheSmoothedLoss) {
  const auto s = shards();
  Config c = config_of(s.dir, 0.2);
  c.precision.dtype = Precision::fp32;
  expect_losses(run_and_reference(c, s), 1e-5, "float32");
}

}  // namespace
}  // namespace ft::training_loss_test
