// Model files keep a trained network and its description exactly; checkpoints read the same way with the
// description taken from their shards; damaged, foreign or mismatched files fail naming the file.
#include <gtest/gtest.h>

#include <fstream>

#include "config/fingerprint.h"
#include "config/loader.h"
#include "io/checksummed_file.h"
#include "io/paths.h"
#include "runtime/error.h"
#include "checkpoint/checkpoint.h"
#include "checkpoint/model_file.h"
#include "optim/optimizer.h"
#include "optim/precision.h"
#include "test_paths.h"

namespace ft {
namespace {

std::string tmp(const std::string& name) {
  const std::string dir = ft::test::temp_dir() + "/model-file";
  paths::create_directories(dir);
  return dir + "/" + name;
}

ModelInfo small_info() {
  ModelInfo info;
  info.config.model.name = ModelName::resnet9;
  info.config.model.width = 8;
  info.config.data.path = tmp("no-such-data");
  info.input = {3, 16, 16, 3};
  info.dataset = "noise";
  info.class_names = {"cat", "dog", "ship"};
  info.mean = {0.4, 0.5, 0.6};
  info.std = {0.2, 0.25, 0.3};
  return info;
}

// A network whose parameters and BatchNorm statistics differ from a fresh one's.
std::shared_ptr<Network> trained_network(const ModelInfo& info) {
  auto net = make_network(info.config.model, info.input);
  at::NoGradGuard no_grad;
  for (auto& [name, t] : model_state(*net))
    if (t.is_floating_point()) t.add_(at::randn_like(t) * 0.1);
  net->train();
  net->forward(at::randn({4, 3, 16, 16}));
  return net;
}

void expect_same_tensors(Network& a, Network& b) {
  const auto sa = model_state(a), sb = model_state(b);
  ASSERT_EQ(sa.size(), sb.size());
  for (std::size_t i = 0; i < sa.size(); ++i) {
    EXPECT_EQ(sa[i].first, sb[i].first);
    EXPECT_TRUE(at::equal(sa[i].second, sb[i].second)) << sa[i].first;
  }
}

void expect_error(const std::function<void()>& f, const std::vector<std::string>& parts) {
  try {
    f();
    FAIL() << "no error";
  } catch (const Error& e) {
    for (const auto& p : parts) EXPECT_NE(std::string(e.what()).find(p), std::string::npos) << e.what();
  }
}

TEST(ModelFile, RoundTripKeepsTensorsAndDescription) {
  const ModelInfo info = small_info();
  auto net = trained_network(info);
  const std::string path = tmp("round.model");
  save_model_file(path, *net, info);
  const TrainedModel loaded = load_trained_model(path);
  expect_same_tensors(*net, *loaded.network);
  EXPECT_FALSE(loaded.network->is_training());
  EXPECT_EQ(loaded.info.class_names, info.class_names);
  EXPECT_EQ(loaded.info.mean, info.mean);
  EXPECT_EQ(loaded.info.std, info.std);
  EXPECT_EQ(loaded.info.dataset, "noise");
  EXPECT_EQ(loaded.info.input.height, 16);
  EXPECT_EQ(loaded.info.input.classes, 3);
  EXPECT_EQ(loaded.info.config.model.width, 8);
  net->eval();
  const auto x = at::randn({2, 3, 16, 16});
  EXPECT_TRUE(at::equal(net->forward(x), loaded.network->forward(x)));
}

// Training converts the whole network (Module::to(device, dtype)), integer buffers included; the loaded
// network has LibTorch's own dtypes again: float32 parameters, int64 num_batches_tracked with the count.
TEST(ModelFile, LoadedNetworkKeepsIntegerBuffers) {
  const ModelInfo info = small_info();
  auto net = trained_network(info);
  net->to(at::kCPU, at::kFloat);
  const std::string path = tmp("dtypes.model");
  save_model_file(path, *net, info);
  int counters = 0;
  for (const auto& [name, t] : model_state(*load_trained_model(path).network)) {
    const bool counter = name.find("num_batches_tracked") != std::string::npos;
    EXPECT_EQ(t.scalar_type(), counter ? at::kLong : at::kFloat) << name;
    if (!counter) continue;
    EXPECT_EQ(t.item<std::int64_t>(), 1) << name;
    ++counters;
  }
  EXPECT_EQ(counters, 8);  // resnet9's eight batch norms
}

TEST(ModelFile, CheckpointNeedsItsShards) {
  ModelInfo info = small_info();
  auto net = trained_network(info);
  auto optimizer = make_optimizer(info.config.optimizer, net->parameters());
  LossScaler scaler(false, 1.0, 100, at::kCPU);
  const std::string path = tmp("run.ckpt");
  save_checkpoint(path, run_fingerprint(info.config), *net, *optimizer, scaler, TrainingPosition{}, at::kCPU);
  expect_error([&] { load_trained_model(path); }, {"checkpoint " + path, "--data"});
}

TEST(ModelFile, DamagedForeignAndMismatchedFilesAreNamed) {
  const ModelInfo info = small_info();
  auto net = trained_network(info);
  const std::string good = tmp("good.model"), cut = tmp("cut.model"), text = tmp("text.model");
  save_model_file(good, *net, info);
  std::ifstream in(good, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), {});
  std::ofstream(cut, std::ios::binary) << bytes.substr(0, bytes.size() / 2);
  std::ofstream(text) << "model: {name: simple_cnn}\n";
  expect_error([&] { load_trained_model(cut); }, {cut, "is damaged (no checksum: the file is truncated"});
  expect_error([&] { load_trained_model(text); }, {text, "is not a fusetrain model file or checkpoint"});
  expect_error([&] { load_trained_model(tmp("missing.model")); }, {"missing.model does not exist"});
  // One flipped bit anywhere, here in the middle of a weight: refused, not read with wrong numbers.
  std::string flipped = bytes;
  flipped[flipped.size() / 2] ^= 0x40;
  const std::string bad = tmp("flipped.model");
  std::ofstream(bad, std::ios::binary) << flipped;
  expect_error([&] { load_trained_model(bad); }, {bad, "is damaged (checksum mismatch)"});
  // The checksum trailer cut off a current model file: damaged, though the archive itself is whole.
  const std::string bare = tmp("bare.model");
  std::ofstream(bare, std::ios::binary) << bytes.substr(0, bytes.size() - kChecksumTrailerBytes);
  expect_error([&] { load_trained_model(bare); }, {bare, "is damaged (no checksum"});

  ShardMeta other;
  other.channels = 1, other.height = 28, other.width = 28, other.class_names = {"a", "b", "c"};
  expect_error([&] { require_compatible_data(info, other, good, "DIR"); },
               {good, "16x16x3 images of 3 classes", "DIR holds 28x28x1 images of 3 classes"});
}

// A model file as written before files carried a checksum (format 1, no trailer), with the class names given.
void write_format_one(const std::string& path, Network& net, const ModelInfo& info, const std::string& class_names) {
  torch::serialize::OutputArchive archive;
  archive.write("kind", c10::IValue(std::string("fusetrain-model")));
  archive.write("format", c10::IValue(std::int64_t{1}));
  archive.write("config", c10::IValue(dump_config(info.config)));
  archive.write("dataset", c10::IValue(info.dataset));
  archive.write("class_names", c10::IValue(class_names));
  archive.write("input_shape", at::tensor({std::int64_t{3}, std::int64_t{16}, std::int64_t{16}, std::int64_t{3}}));
  archive.write("mean", at::tensor(info.mean, at::kDouble));
  archive.write("std", at::tensor(info.std, at::kDouble));
  write_model_tensors(archive, net);
  archive.save_to(path);
}

// Model files written before they carried a checksum still load, unverified.
TEST(ModelFile, FormatOneWithoutChecksumStillLoads) {
  const ModelInfo info = small_info();
  auto net = trained_network(info);
  const std::string path = tmp("format1.model");
  write_format_one(path, *net, info, "cat\ndog\nship\n");
  expect_same_tensors(*net, *load_trained_model(path).network);
}

// A file naming one class more or one fewer than its network's 3 outputs is refused, naming both counts.
TEST(ModelFile, ClassNamesMustMatchTheOutputs) {
  const ModelInfo info = small_info();
  auto net = trained_network(info);
  for (const auto& [names, count] : {std::pair{"cat\ndog\nship\nfrog\n", "4"}, std::pair{"cat\ndog\n", "2"}}) {
    const std::string path = tmp(cat("classes", count, ".model"));
    write_format_one(path, *net, info, names);
    expect_error([&] { load_trained_model(path); },
                 {path, cat(" names ", count, " classes but its network has 3 outputs")});
  }
}

TEST(ModelFile, WeightsOfAnotherModelAreRefused) {
  ModelInfo info = small_info();
  auto net = trained_network(info);
  const std::string path = tmp("wide.model");
  save_model_file(path, *net, info);
  // The same file claiming a wider network: its tensors no longer fit.
  info.config.model.width = 16;
  auto wide = make_network(info.config.model, info.input);
  torch::serialize::InputArchive archive;
  archive.load_from(path);
  expect_error([&] { read_model_tensors(archive, *wide, path); }, {path, "has shape"});
}

}  // namespace
}  // namespace ft
