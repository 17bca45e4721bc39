// Small shards of random images and labels written for a test, the images as the network sees them, and a linear
// classifier to train on them: for tests that work out what training must give from the images themselves.
#pragma once

#include <ATen/ATen.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "config/schema.h"
#include "io/paths.h"
#include "shard/shard_format.h"

namespace ft::test {

struct NoiseSet {
  std::int64_t train_images = 32, test_images = 8;
  int side = 6, channels = 3, classes = 4;
  std::vector<double> mean = {0.4, 0.5, 0.6}, std = {0.2, 0.25, 0.3};
};

struct NoiseShards {
  std::string dir;
  std::vector<std::uint8_t> train, test;  // NHWC, as written
  std::vector<std::int32_t> train_labels, test_labels;
};

// One shard per split in a fresh `dir`, pixels and labels drawn from a fixed seed (train, then test).
inline NoiseShards noise_shards(const NoiseSet& set, const std::string& dir) {
  NoiseShards s;
  s.dir = dir;
  paths::remove_all(dir);
  paths::create_directories(dir);
  std::mt19937 rng(17);
  for (const bool train : {true, false}) {
    const std::int64_t n = train ? set.train_images : set.test_images;
    auto& images = train ? s.train : s.test;
    auto& labels = train ? s.train_labels : s.test_labels;
    images.resize(static_cast<std::size_t>(n * set.side * set.side * set.channels));
    labels.resize(static_cast<std::size_t>(n));
    for (auto& v : images) v = static_cast<std::uint8_t>(rng() % 256);
    for (auto& l : labels) l = static_cast<std::int32_t>(rng() % static_cast<unsigned>(set.classes));
    ShardMeta meta;
    meta.dataset = "noise";
    meta.split = train ? "train" : "test";
    for (int k = 0; k < set.classes; ++k) meta.class_names.push_back(std::string(1, static_cast<char>('a' + k)));
    meta.mean = set.mean;
    meta.std = set.std;
    meta.count = n;
    meta.height = meta.width = set.side;
    meta.channels = set.channels;
    write_shard(dir + "/" + shard_file_name(meta.split, 0, 1), meta, images.data(), labels.data());
  }
  return s;
}

// Images as the network sees them: (pixel / 255 - mean) / std per channel, rounded to float32 as the batch is
// assembled (then widened to float64), [N, C, H, W]; `rows` picks images in that order.
inline at::Tensor normalised_images(const NoiseSet& set, const std::vector<std::uint8_t>& nhwc,
                                    const at::Tensor& rows) {
  const auto n = static_cast<std::int64_t>(nhwc.size()) / (set.side * set.side * set.channels);
  const auto all = at::from_blob(const_cast<std::uint8_t*>(nhwc.data()), {n, set.side, set.side, set.channels},
                                 at::kByte);
  const auto mean = at::tensor(std::vector<float>(set.mean.begin(), set.mean.end())).view({1, 1, 1, set.channels});
  std::vector<float> inv;
  for (double sd : set.std) inv.push_back(static_cast<float>(1.0 / sd));
  const auto inv_std = at::tensor(inv).view({1, 1, 1, set.channels});
  const auto x = (all.index_select(0, rows).to(at::kFloat) * (1.0f / 255.0f) - mean) * inv_std;
  return x.permute({0, 3, 1, 2}).to(at::kDouble);
}

// A linear classifier (conv_stack of one linear layer) trained with plain SGD on the CPU, one thread, seed 3;
// the caller sets the data's batch, the rate, the precision and the epochs.
inline Config linear_sgd(const std::string& data) {
  Config c;
  c.model.name = ModelName::conv_stack;
  LayerSpec linear;
  linear.type = LayerType::linear;
  c.model.layers = {linear};
  c.data.path = data;
  c.optimizer.name = OptimizerName::sgd;
  c.train.threads = 1;
  c.train.seed = 3;
  c.train.device = DeviceChoice::cpu;
  return c;
}

}  // namespace ft::test
