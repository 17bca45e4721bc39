// Configs the CPU training tests share: the fast CIFAR-10 recipe's settings at a size a CPU trains in seconds,
// and a simple_cnn run under fused Adam whose step the graphed step can replay.
#pragma once

#include <string>

#include "config/schema.h"

namespace ft::test {

// configs/fast/cifar10.yaml's recipe on a narrow net (width 16): whitening fitted to the data and its bias
// trained one epoch, frozen BatchNorm scales, per-group rates, Nesterov SGD on the linear rise and fall,
// label smoothing, lookahead, alternating flips with 2-pixel translations, TTA. Data, seed, epochs and device
// are the caller's.
inline void apply_small_fast_recipe(Config& c) {
  c.model.name = ModelName::fast_cifar;
  c.model.width = 16;
  c.model.whiten_bias_epochs = 1;
  c.data.batch_size = 128;
  c.data.limit_test = 1000;
  c.data.augment = {2, true, true, 0};
  c.optimizer.lr = 0.4;
  c.optimizer.momentum = 0.85;
  c.optimizer.nesterov = true;
  c.optimizer.weight_decay = 0.005;
  c.scheduler.name = SchedulerName::linear;
  c.scheduler.pct_start = 0.23;
  c.scheduler.warmup_start = 0.2;
  c.scheduler.min_lr = 0.028;
  c.regularization.label_smoothing = 0.2;
  c.train.lookahead_every = 5;
  c.train.tta = Tta::flip_translate;
}

// simple_cnn under fused Adam with a warm-up then cosine schedule, 2 epochs on the CPU: every step's rate
// differs, and reaches the fused kernels as a device tensor in a graphed run and as an argument in an eager one.
inline Config graphable_adam(const std::string& data) {
  Config c;
  c.model.name = ModelName::simple_cnn;
  c.data.path = data;
  c.data.batch_size = 64;
  c.data.limit_test = 128;
  c.data.augment = {2, true, false, 0};
  c.optimizer.name = OptimizerName::adam;
  c.optimizer.lr = 2e-3;
  c.optimizer.implementation = OptimizerImplementation::fused;
  c.scheduler.name = SchedulerName::cosine;
  c.scheduler.warmup_epochs = 1;
  c.train.epochs = 2;
  c.train.seed = 9;
  c.train.device = DeviceChoice::cpu;
  return c;
}

}  // namespace ft::test
