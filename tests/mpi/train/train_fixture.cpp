// Synthetic but learnable shards (class = brightest quadrant, plus noise) and the small config used by
// the equivalence and uneven-data tests.
#include "train_fixture.h"

#include <algorithm>
#include <random>
#include <vector>

#include "io/paths.h"
#include "shard/shard_format.h"
#include "test_paths.h"

namespace ft::test {

std::string synthetic_shards(const std::string& name, std::int64_t train, int shards, bool identical) {
  const std::string dir = ft::test::temp_dir() + "/" + name;
  if (world().rank() == 0) {
    paths::remove_all(dir);
    paths::create_directories(dir);
    std::mt19937 rng(11);
    auto make = [&](std::int64_t n, std::vector<std::uint8_t>& images, std::vector<std::int32_t>& labels) {
      images.resize(static_cast<std::size_t>(n * 8 * 8 * 3));
      labels.resize(static_cast<std::size_t>(n));
      for (std::int64_t i = 0; i < n; ++i) {
        const int label = static_cast<int>(rng() % 4);
        labels[i] = label;
        for (int y = 0; y < 8; ++y)
          for (int x = 0; x < 8; ++x)
            for (int c = 0; c < 3; ++c) {
              const bool bright = (y / 4) * 2 + (x / 4) == label;
              images[((i * 8 + y) * 8 + x) * 3 + c] = static_cast<std::uint8_t>((bright ? 150 : 40) + rng() % 60);
            }
      }
      for (std::int64_t i = 1; identical && i < n; ++i) {
        labels[i] = labels[0];
        std::copy(images.begin(), images.begin() + 192, images.begin() + i * 192);
      }
    };
    ShardMeta meta;
    meta.dataset = "quadrants";
    meta.class_names = {"tl", "tr", "bl", "br"};
    meta.mean = {0.3, 0.3, 0.3};
    meta.std = {0.2, 0.2, 0.2};
    meta.height = meta.width = 8;
    meta.channels = 3;
    meta.source_sha256 = "synthetic";
    std::vector<std::uint8_t> images;
    std::vector<std::int32_t> labels;
    make(train, images, labels);
    for (int s = 0; s < shards; ++s) {
      const std::int64_t begin = train * s / shards, end = train * (s + 1) / shards;
      meta.split = "train";
      meta.shard_index = s;
      meta.shard_count = shards;
      meta.count = end - begin;
      write_shard(dir + "/" + shard_file_name("train", s, shards), meta, images.data() + begin * 192,
                  labels.data() + begin);
    }
    make(64, images, labels);
    meta.split = "test";
    meta.shard_index = 0;
    meta.shard_count = 1;
    meta.count = 64;
    write_shard(dir + "/" + shard_file_name("test", 0, 1), meta, images.data(), labels.data());
  }
  world().barrier();
  return dir;
}

Config small_config(const std::string& data_path, const std::string& backend) {
  Config c;
  c.model.name = ModelName::conv_stack;
  LayerSpec conv;
  conv.type = LayerType::conv;
  conv.out = 6;
  LayerSpec relu;
  relu.type = LayerType::relu;
  LayerSpec pool;
  pool.type = LayerType::maxpool;
  pool.kernel = 2;
  pool.stride = 2;
  LayerSpec flatten;
  flatten.type = LayerType::flatten;
  LayerSpec linear;
  linear.type = LayerType::linear;
  c.model.layers = {conv, relu, pool, flatten, linear};
  c.data.path = data_path;
  c.data.batch_size = 8;
  c.data.shuffle = Shuffle::global;
  c.optimizer.lr = 0.05;
  c.optimizer.momentum = 0.9;
  c.precision.dtype = Precision::fp64;
  c.train.epochs = 2;
  c.train.seed = 3;
  c.train.device = DeviceChoice::cpu;
  c.distributed.backend = choice_from<BackendName>("backend", backend);
  c.distributed.stall_timeout_s = 20;
  c.distributed.first_bucket_mib = 0.0005;  // several buckets even for this small model
  c.distributed.bucket_mib = 0.002;
  return c;
}

std::vector<at::Tensor> parameters_of(const Trainer& trainer) {
  std::vector<at::Tensor> out;
  for (const auto& p : trainer.network()->parameters()) out.push_back(p.detach().clone());
  return out;
}

std::string bytes_of(const at::Tensor& t) {
  const auto c = t.contiguous();
  return std::string(static_cast<const char*>(c.data_ptr()), static_cast<std::size_t>(c.nbytes()));
}

}  // namespace ft::test
