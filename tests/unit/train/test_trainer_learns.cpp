// Real learning on real data: simple_cnn trained on a Fashion-MNIST subset on the CPU must reach a
// stated test accuracy, and the same seed must reproduce the same per-epoch metrics exactly.
#include <gtest/gtest.h>

#include <cstdio>

#include "io/paths.h"
#include "comm/backend.h"
#include "data_prep/prep_pipeline.h"
#include "test_world.h"
#include "device/device_setup.h"
#include "train/trainer.h"
#include "test_paths.h"
#include "train_configs.h"

namespace ft {
namespace {

std::string fashion_subset() {
  const std::string out = ft::test::temp_dir() + "/fashion-subset";
  if (paths::exists(out + "/test-00000-of-00002.h5")) return out;
  prep::PrepOptions options;
  options.format = prep::Format::idx;
  options.input = ft::test::fashion_mnist_dir();
  options.output = out;
  options.shards = 2;
  options.limit = 6000;
  prep::run_prep(options);
  return out;
}

Config subset_config(const std::string& path) {
  Config c;
  c.model.name = ModelName::simple_cnn;
  c.model.dropout = 0.1;
  c.data.path = path;
  c.data.batch_size = 64;
  c.data.limit_test = 2000;
  c.optimizer.name = OptimizerName::sgd;
  c.optimizer.lr = 0.05;
  c.optimizer.momentum = 0.9;
  c.train.epochs = 2;
  c.train.seed = 5;
  c.train.device = DeviceChoice::cpu;  // a CPU test, also on a GPU host
  return c;
}

TEST(TrainerLearns, FashionMnistSubsetReachesAccuracy) {
  if (!paths::exists(ft::test::fashion_mnist_dir() + "/train-images-idx3-ubyte.gz"))
    GTEST_SKIP() << "Fashion-MNIST not installed (apt-get install dataset-fashion-mnist)";
  auto& world = test::world();
  const Config c = subset_config(fashion_subset());
  auto backend = make_backend(world, BackendOptions{});
  Trainer trainer(c, world, *backend, place_rank(c, world));
  const auto outcome = trainer.run();
  ASSERT_EQ(outcome.epochs.size(), 2u);
  EXPECT_LT(outcome.epochs[1].train_loss, outcome.epochs[0].train_loss);
  // 6,000 images, 2 epochs: a linear model gets ~0.75; the CNN must clearly learn past that. Measured
  // 0.7985-0.8085 over the default and AVX2 ISAs (tests/README.md, "Learning bounds"); bound 0.77, 2.85
  // points under the lowest, nearly 3x the spread between ISAs.
  std::printf("simple_cnn final test accuracy %.4f\n", outcome.summary.final_test_acc);
  EXPECT_GE(outcome.summary.final_test_acc, 0.77) << "test accuracy " << outcome.summary.final_test_acc;
  // The images the second epoch classified right while training on them: far above chance (0.1) for a network
  // that scores 0.77 on the test split (0.8039 measured, default ISA; the bound is half of that).
  std::printf("simple_cnn epoch 2 train accuracy %.4f\n", outcome.epochs[1].train_acc);
  EXPECT_GE(outcome.epochs[1].train_acc, 0.4) << "train accuracy " << outcome.epochs[1].train_acc;
  EXPECT_EQ(outcome.data.dataset, "fashion-mnist");
  EXPECT_EQ(outcome.rank.train_images, 6000);
}

// The fast CIFAR-10 recipe end to end on the CPU (narrow net, grey 28x28 input): whitening fitted to the
// data, frozen BatchNorm scales, per-group learning rates, lookahead, alternating flips and TTA together.
TEST(TrainerLearns, FastCifarRecipeLearnsFashionMnist) {
  if (!paths::exists(ft::test::fashion_mnist_dir() + "/train-images-idx3-ubyte.gz"))
    GTEST_SKIP() << "Fashion-MNIST not installed (apt-get install dataset-fashion-mnist)";
  auto& world = test::world();
  Config c = subset_config(fashion_subset());
  test::apply_small_fast_recipe(c);
  auto backend = make_backend(world, BackendOptions{});
  Trainer trainer(c, world, *backend, place_rank(c, world));
  const auto outcome = trainer.run();
  ASSERT_EQ(outcome.epochs.size(), 2u);
  EXPECT_LT(outcome.epochs[1].train_loss, outcome.epochs[0].train_loss);
  // 6,000 images, 2 epochs: measured 0.859-0.866 over the default and AVX2 ISAs (tests/README.md,
  // "Thresholds"); bound 0.80, 5.9 points under the lowest. simple_cnn's test above asks 0.77 of the same data.
  std::printf("fast_cifar final test accuracy %.4f\n", outcome.summary.final_test_acc);
  EXPECT_GE(outcome.summary.final_test_acc, 0.80) << "test accuracy " << outcome.summary.final_test_acc;
  for (const auto& item : trainer.network()->named_parameters())
    if (item.key().find("norm") != std::string::npos && item.key().find("weight") != std::string::npos)
      EXPECT_TRUE(at::equal(item.value(), at::ones_like(item.value()))) << item.key() << " is frozen at 1";
}

// The Muon recipe's pieces end to end on the CPU: Muon on the filters (LibTorch's SGD for the rest), bf16 weights
// with float32 BatchNorm, the fused pool+norm+GELU layers' CPU reference, the linear decay and the whitening
// bias's own decay, on 1,000 Fashion-MNIST images for 2 epochs (rates for batch 100 as
// configs/fast/cifar10_muon.yaml derives them for 2000).
TEST(TrainerLearns, FastCifarMuonWithBf16WeightsLearnsFashionMnist) {
  if (!paths::exists(ft::test::fashion_mnist_dir() + "/train-images-idx3-ubyte.gz"))
    GTEST_SKIP() << "Fashion-MNIST not installed (apt-get install dataset-fashion-mnist)";
  auto& world = test::world();
  Config c = subset_config(fashion_subset());
  c.model.name = ModelName::fast_cifar;
  c.model.width = 8, c.model.logit_divisor = 32, c.model.head_unit_std = true, c.model.whiten_bias_uniform = true;
  c.model.whiten_bias_epochs = 1, c.model.whiten_bias_decay = true, c.model.norm_bias_lr_scale = 1;
  c.model.head_lr_scale = 12.64, c.model.pool_norm_gelu = PoolNormGeluKernel::fused;
  c.data.batch_size = 100, c.data.limit_train = 1000, c.data.limit_test = 500;
  c.data.augment = {2, true, true, 0};
  c.optimizer.name = OptimizerName::muon;
  c.optimizer.lr = 5.3, c.optimizer.momentum = 0.85, c.optimizer.nesterov = true, c.optimizer.weight_decay = 7.547e-4;
  c.scheduler.name = SchedulerName::linear_decay;
  c.precision.dtype = Precision::bf16, c.precision.half_weights = true;
  c.regularization.label_smoothing = 0.2;
  auto backend = make_backend(world, BackendOptions{});
  Trainer trainer(c, world, *backend, place_rank(c, world));
  const auto outcome = trainer.run();
  ASSERT_EQ(outcome.epochs.size(), 2u);
  EXPECT_LT(outcome.epochs[1].train_loss, outcome.epochs[0].train_loss);
  // Measured 0.7720 (default ISA) and 0.7780 (AVX2) (tests/README.md, "Learning bounds"); bound 0.70, 7 points
  // under the lower, 7x chance.
  std::printf("fast_cifar muon bf16-weights final test accuracy %.4f\n", outcome.summary.final_test_acc);
  EXPECT_GE(outcome.summary.final_test_acc, 0.70) << "test accuracy " << outcome.summary.final_test_acc;
  for (const auto& item : trainer.network()->named_parameters())
    EXPECT_EQ(item.value().scalar_type(), item.key().find(".norm") != std::string::npos ? at::kFloat : at::kBFloat16)
        << item.key();
}

TEST(TrainerLearns, SameSeedSameMetrics) {
  if (!paths::exists(ft::test::fashion_mnist_dir() + "/train-images-idx3-ubyte.gz"))
    GTEST_SKIP() << "Fashion-MNIST not installed (apt-get install dataset-fashion-mnist)";
  auto& world = test::world();
  Config c = subset_config(fashion_subset());
  c.data.limit_train = 1024;
  c.data.limit_test = 256;
  c.data.augment.flip = true;
  c.data.augment.crop_padding = 2;
  c.train.epochs = 2;
  auto backend = make_backend(world, BackendOptions{});
  const auto first = Trainer(c, world, *backend, place_rank(c, world)).run();
  const auto second = Trainer(c, world, *backend, place_rank(c, world)).run();
  for (std::size_t e = 0; e < first.epochs.size(); ++e) {
    EXPECT_EQ(first.epochs[e].train_loss, second.epochs[e].train_loss);
    EXPECT_EQ(first.epochs[e].test_acc, second.epochs[e].test_acc);
  }
}

}  // namespace
}  // namespace ft
