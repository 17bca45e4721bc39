// Tests of YAML configuration loading: defaults, every error message's content (file, line, key,
// suggestion), --set overrides, dump round trips, device validation, and every shipped config file.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <functional>
#include <iterator>
#include <utility>

#include "config/config_error.h"
#include "config/loader.h"
#include "runtime/error.h"
#include "test_paths.h"

namespace ft {
namespace {

std::string error_of(const std::string& yaml, const std::vector<std::string>& overrides = {}) {
  try {
    parse_config(yaml, "run.yaml", overrides);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(ConfigLoader, MinimalConfigFromTheGuideParses) {
  const auto c = parse_config(
      "model: {name: simple_cnn}\n"
      "data: {path: /data/cifar10_h5, batch_size: 32}\n"
      "optimizer: {name: sgd, lr: 0.01, momentum: 0.9}\n"
      "train: {epochs: 2}\n"
      "output: {dir: runs/}\n",
      "minimal.yaml");
  EXPECT_EQ(c.model.name, ModelName::simple_cnn);
  EXPECT_EQ(c.data.path, "/data/cifar10_h5");
  EXPECT_EQ(c.data.batch_size, 32);
  EXPECT_DOUBLE_EQ(c.optimizer.lr, 0.01);
  EXPECT_DOUBLE_EQ(c.optimizer.momentum, 0.9);
  EXPECT_EQ(c.train.epochs, 2);
  EXPECT_EQ(c.output.dir, "runs/");
  EXPECT_EQ(c.distributed.backend, BackendName::mpi);  // default
  EXPECT_DOUBLE_EQ(c.distributed.stall_timeout_s, 60);
}

TEST(ConfigLoader, UnknownKeyNamesFileLineAndNearestKey) {
  const auto msg = error_of("model: {name: simple_cnn}\noptimzer:\n  lr: 0.1\n");
  EXPECT_NE(msg.find("run.yaml:2:1"), std::string::npos) << msg;
  EXPECT_NE(msg.find("did you mean 'optimizer'"), std::string::npos) << msg;
  const auto nested = error_of("optimizer:\n  learning_rate: 0.1\n");
  EXPECT_NE(nested.find("optimizer.learning_rate"), std::string::npos) << nested;
  EXPECT_NE(nested.find("run.yaml:2:3"), std::string::npos) << nested;
}

TEST(ConfigLoader, WrongTypeNamesTheKey) {
  const auto msg = error_of("data: {batch_size: many}\n");
  EXPECT_NE(msg.find("data.batch_size"), std::string::npos) << msg;
  EXPECT_NE(msg.find("expected an int"), std::string::npos) << msg;
  EXPECT_NE(error_of("data: {batch_size: 1.5}\n").find("expected an integer"), std::string::npos);
  EXPECT_NE(error_of("data: {normalize: perhaps}\n").find("data.normalize"), std::string::npos);
  EXPECT_NE(error_of("data: [1, 2]\n").find("expected a map"), std::string::npos);
}

TEST(ConfigLoader, OutOfRangeAndBadChoiceNameTheKey) {
  auto msg = error_of("optimizer: {lr: -0.1}\n");
  EXPECT_NE(msg.find("optimizer.lr"), std::string::npos) << msg;
  EXPECT_NE(msg.find("must be > 0"), std::string::npos) << msg;
  msg = error_of("distributed: {backend: carrier-pigeon}\n");
  EXPECT_NE(msg.find("not one of mpi|gloo|nccl"), std::string::npos) << msg;
  EXPECT_NE(error_of("data: {batch_size: 0}\n").find("must be >= 1"), std::string::npos);
}

TEST(ConfigLoader, ChoicesParseIntoTheirEnumsAndListTheValidNames) {
  const auto c = parse_config(
      "model: {name: fast_cifar, conv_relu: fused}\ndata: {remainder: pad, shuffle: global}\n"
      "optimizer: {name: rmsprop}\nscheduler: {name: onecycle}\nprecision: {dtype: bf16}\n"
      "train: {device: auto, tta: flip_translate}\ndistributed: {backend: gloo, compression: fp16}\n",
      "run.yaml");
  EXPECT_EQ(c.model.name, ModelName::fast_cifar);
  EXPECT_EQ(c.model.conv_relu, ConvReluKernel::fused);
  EXPECT_EQ(c.data.remainder, Remainder::pad);
  EXPECT_EQ(c.data.shuffle, Shuffle::global);
  EXPECT_EQ(c.optimizer.name, OptimizerName::rmsprop);
  EXPECT_EQ(c.scheduler.name, SchedulerName::onecycle);
  EXPECT_EQ(c.precision.dtype, Precision::bf16);
  EXPECT_EQ(c.train.device, DeviceChoice::automatic);
  EXPECT_EQ(c.train.tta, Tta::flip_translate);
  EXPECT_EQ(c.distributed.backend, BackendName::gloo);
  EXPECT_EQ(c.distributed.compression, Compression::fp16);
  const auto msg = error_of("model: {name: vgg16}\n");
  EXPECT_NE(msg.find("run.yaml:1:9: key 'model.name': 'vgg16' is not one of "
                     "simple_cnn|conv_stack|resnet18|resnet9|fast_cifar"),
            std::string::npos)
      << msg;
  EXPECT_NE(error_of("model: {conv_relu: cudnn}\n").find("'cudnn' is not one of aten|fused"), std::string::npos);
  EXPECT_NE(config_reference().find("train.device (auto|cpu|cuda, default auto)"), std::string::npos);
}

// Callers (the sweep) read an error's place from its fields, so rewording a message cannot break them.
TEST(ConfigLoader, ErrorsCarryTheirPlaceAsFields) {
  try {
    parse_config("data:\n  batch_size: 0\n", "run.yaml");
    FAIL() << "expected ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.file(), "run.yaml");
    EXPECT_EQ(e.line(), 2);
    EXPECT_EQ(e.column(), 3);
    EXPECT_EQ(e.key(), "data.batch_size");
    EXPECT_EQ(e.message(), "must be >= 1, got 0");
    EXPECT_EQ(std::string(e.what()), "run.yaml:2:3: key 'data.batch_size': must be >= 1, got 0");
  }
  try {
    parse_config("", "run.yaml", {"model.layers=[{type: conv, out: x}]"});
    FAIL() << "expected ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.file(), "--set model.layers=[{type: conv, out: x}]");
    EXPECT_EQ(e.line(), 0);
    EXPECT_EQ(e.key(), "model.layers[0]");
    EXPECT_EQ(std::string(e.what()),
              "--set model.layers=[{type: conv, out: x}]: key 'model.layers[0]' out: expected an int value, got 'x'");
  }
}

TEST(ConfigLoader, MalformedYamlGivesLineAndColumn) {
  const auto msg = error_of("model: {name: simple_cnn\ndata: [\n");
  EXPECT_NE(msg.find("run.yaml:"), std::string::npos) << msg;
  EXPECT_NE(msg.find("malformed YAML"), std::string::npos) << msg;
}

TEST(ConfigLoader, OverridesApplyAndTheirErrorsNameTheOverride) {
  const auto c = parse_config("optimizer: {lr: 0.1}\n", "run.yaml",
                              {"optimizer.lr=0.05", "data.batch_size=64", "data.augment.flip=true"});
  EXPECT_DOUBLE_EQ(c.optimizer.lr, 0.05);
  EXPECT_EQ(c.data.batch_size, 64);
  EXPECT_TRUE(c.data.augment.flip);
  const auto msg = error_of("", {"optimizer.lr=fast"});
  EXPECT_NE(msg.find("--set optimizer.lr=fast"), std::string::npos) << msg;
  EXPECT_NE(error_of("", {"optimizer.lrr=1"}).find("did you mean 'optimizer.lr'"), std::string::npos);
  EXPECT_NE(error_of("", {"no-equals-sign"}).find("key=value"), std::string::npos);
}

TEST(ConfigLoader, DumpRoundTripsEveryKey) {
  const auto c = parse_config(
      "model: {name: conv_stack, layers: [{type: conv, out: 16}, relu, {type: maxpool, kernel: 2, stride: 2}, "
      "flatten, {type: dropout, p: 0.3}, {type: linear, out: 0}]}\n"
      "data: {path: x, batch_size: 48, augment: {crop_padding: 4, flip: true, cutout: 8}}\n"
      "precision: {dtype: bf16}\nscheduler: {name: onecycle}\ndistributed: {backend: gloo, bucket_mib: 4}\n",
      "a.yaml");
  const auto text = dump_config(c);
  const auto again = parse_config(text, "dump.yaml");
  EXPECT_EQ(dump_config(again), text);
  ASSERT_EQ(again.model.layers.size(), 6u);
  EXPECT_EQ(again.model.layers[0].out, 16);
  EXPECT_DOUBLE_EQ(again.model.layers[4].p, 0.3);
  EXPECT_EQ(again.data.augment.cutout, 8);
}

TEST(ConfigLoader, LayerErrorsNameTheLayer) {
  auto msg = error_of("model: {name: conv_stack, layers: [{type: conv, out: 8}, {type: attention}]}\n");
  EXPECT_NE(msg.find("model.layers[1]"), std::string::npos) << msg;
  EXPECT_NE(msg.find("unknown layer type 'attention'"), std::string::npos) << msg;
  msg = error_of("model: {name: conv_stack, layers: [{type: conv, channels: 8}]}\n");
  EXPECT_NE(msg.find("unknown layer key 'channels'"), std::string::npos) << msg;
}

// validate_for_device's refusal of a config that `change` makes of `base` (on a host with or without CUDA), or "".
std::string refusal_of(Config base, const std::function<void(Config&)>& change, bool cuda) {
  change(base);
  try {
    validate_for_device(base, cuda);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(ConfigValidation, ContradictionsAreErrors) {
  Config c;
  c.data.path = "x";
  EXPECT_NO_THROW(validate_for_device(c, false));
  c.distributed.backend = BackendName::nccl;
  EXPECT_THROW(validate_for_device(c, false), Error);
  c.distributed.allow_device_sharing = true;
  try {
    validate_for_device(c, true);
    FAIL() << "nccl with device sharing accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("NCCL cannot run two ranks on one GPU"), std::string::npos);
  }
  Config half;
  half.data.path = "x";
  half.precision.dtype = Precision::fp16;
  EXPECT_THROW(validate_for_device(half, false), Error);
  EXPECT_NO_THROW(validate_for_device(half, true));
  Config no_path;
  EXPECT_THROW(validate_for_device(no_path, false), Error);
}

// train.cuda_graphs on what a graph cannot replay is refused before a run starts, naming what to change.
TEST(ConfigValidation, CudaGraphsNeedAReplayableStep) {
  Config graphed;
  graphed.data.path = "x";
  graphed.train.cuda_graphs = true;
  const auto refusal = [&](const std::function<void(Config&)>& change, bool cuda) {
    return refusal_of(graphed, change, cuda);
  };
  EXPECT_EQ(refusal([](Config&) {}, true), "");
  EXPECT_EQ(refusal([](Config& c) { c.precision.dtype = Precision::bf16; }, true), "");
  EXPECT_EQ(refusal([](Config& c) { c.precision.dtype = Precision::fp16; }, true), "");
  const std::pair<std::function<void(Config&)>, std::string> refused[] = {
      {[](Config&) {}, "train.cuda_graphs needs a CUDA device: this run trains on the CPU"},
      {[](Config& c) { c.train.accumulation_steps = 2; }, "train.accumulation_steps 1"},
      {[](Config& c) { c.precision.dtype = Precision::fp64; }, "precision fp32, bf16 or fp16, not 'fp64'"},
      {[](Config& c) { c.distributed.reproducible = true; c.data.shuffle = Shuffle::global; c.train.threads = 1; },
       "distributed.reproducible false"},
      {[](Config& c) { c.optimizer.implementation = OptimizerImplementation::per_tensor; }, "fused optimizer step"},
      {[](Config& c) { c.optimizer.name = OptimizerName::rmsprop; }, "fused optimizer step"},
      {[](Config& c) { c.distributed.compression = Compression::powersgd; }, "distributed.compression none"},
  };
  for (std::size_t i = 0; i < std::size(refused); ++i) {
    const std::string message = refusal(refused[i].first, /*cuda=*/i != 0);
    EXPECT_NE(message.find(refused[i].second), std::string::npos) << i << ": " << message;
  }
}

// model.sync_batchnorm and compression powersgd name the combinations they cannot work in.
TEST(ConfigValidation, SyncBatchNormAndPowerSgdRefuseWhatCannotWork) {
  Config plain;
  plain.data.path = "x";
  const auto refusal = [&](const std::function<void(Config&)>& change) { return refusal_of(plain, change, true); };
  const auto sync = [](Config& c) {
    c.model.name = ModelName::resnet18;
    c.model.sync_batchnorm = true;
  };
  EXPECT_EQ(refusal(sync), "");
  EXPECT_EQ(refusal([](Config& c) { c.distributed.compression = Compression::powersgd; }), "");
  const std::pair<std::function<void(Config&)>, std::string> refused[] = {
      {[](Config& c) { c.model.sync_batchnorm = true; },
       "model.sync_batchnorm: model.name 'simple_cnn' has no BatchNorm layer"},
      {[](Config& c) {
         c.model.name = ModelName::conv_stack;
         c.model.layers = {LayerSpec{}, LayerSpec{LayerType::linear}};
         c.model.sync_batchnorm = true;
       },
       "model.name 'conv_stack' (model.layers without a bn layer) has no BatchNorm layer"},
      {[&](Config& c) {
         sync(c);
         c.distributed.reproducible = true;
         c.data.shuffle = Shuffle::global;
         c.train.threads = 1;
       },
       "distributed.reproducible needs model.sync_batchnorm false"},
      {[](Config& c) {
         c.distributed.compression = Compression::powersgd;
         c.distributed.reproducible = true;
         c.data.shuffle = Shuffle::global;
         c.train.threads = 1;
       },
       "distributed.reproducible needs distributed.compression none"},
      {[](Config& c) {
         c.distributed.compression = Compression::powersgd;
         c.precision.dtype = Precision::fp16;
       },
       "distributed.compression 'powersgd' needs precision.dtype fp32, bf16 or fp64, not 'fp16'"},
  };
  for (std::size_t i = 0; i < std::size(refused); ++i) {
    const std::string message = refusal(refused[i].first);
    EXPECT_NE(message.find(refused[i].second), std::string::npos) << i << ": " << message;
  }
}

// precision.half_weights needs a half type, and with fp16 the fused step; the Muon recipe's keys parse.
TEST(ConfigValidation, HalfWeightsNeedAHalfTypeAndWithFp16TheFusedStep) {
  Config half;
  half.data.path = "x";
  half.precision.half_weights = true;
  half.precision.dtype = Precision::fp16;
  const auto refusal = [&](const std::function<void(Config&)>& change, bool cuda = true) {
    return refusal_of(half, change, cuda);
  };
  EXPECT_EQ(refusal([](Config&) {}), "");
  EXPECT_EQ(refusal([](Config& c) { c.precision.dtype = Precision::bf16; }), "");
  EXPECT_EQ(refusal([](Config& c) { c.optimizer.name = OptimizerName::muon; }), "");
  EXPECT_EQ(refusal([](Config& c) {
              c.precision.dtype = Precision::bf16;
              c.optimizer.implementation = OptimizerImplementation::per_tensor;
            }),
            "");
  const std::pair<std::function<void(Config&)>, std::string> refused[] = {
      {[](Config& c) { c.precision.dtype = Precision::fp32; }, "precision.dtype fp16 or bf16"},
      {[](Config& c) { c.precision.dtype = Precision::fp64; }, "precision.dtype fp16 or bf16"},
      {[](Config& c) { c.optimizer.implementation = OptimizerImplementation::per_tensor; }, "fused optimizer step"},
      {[](Config& c) { c.optimizer.name = OptimizerName::rmsprop; }, "fused optimizer step"},
      {[](Config& c) {
         c.precision.dtype = Precision::bf16, c.distributed.reproducible = true;
         c.data.shuffle = Shuffle::global, c.train.threads = 1;
       },
       "distributed.reproducible false"},
  };
  for (std::size_t i = 0; i < std::size(refused); ++i) {
    const std::string message = refusal(refused[i].first);
    EXPECT_NE(message.find(refused[i].second), std::string::npos) << i << ": " << message;
    EXPECT_NE(message.find("precision.half_weights"), std::string::npos) << i << ": " << message;
  }
  const auto bf16_cpu = [](OptimizerImplementation implementation) {
    return [implementation](Config& c) {
      c.precision.dtype = Precision::bf16, c.train.device = DeviceChoice::cpu;
      c.optimizer.implementation = implementation;
    };
  };
  EXPECT_EQ(refusal(bf16_cpu(OptimizerImplementation::automatic), false), "");
  EXPECT_NE(refusal(bf16_cpu(OptimizerImplementation::fused), false).find("ATen's fused CPU kernels"),
            std::string::npos);
  const Config muon = parse_config(
      "model: {name: fast_cifar, pool_norm_gelu: aten, logit_divisor: 256}\n"
      "optimizer: {name: muon, muon_lr: 0.3, muon_momentum: 0.5, muon_ns_steps: 5}\n"
      "scheduler: {name: linear_decay}\nprecision: {dtype: fp16, half_weights: true}\n",
      "muon.yaml");
  EXPECT_EQ(muon.optimizer.name, OptimizerName::muon);
  EXPECT_DOUBLE_EQ(muon.optimizer.muon_lr, 0.3);
  EXPECT_DOUBLE_EQ(muon.optimizer.muon_momentum, 0.5);
  EXPECT_EQ(muon.optimizer.muon_ns_steps, 5);
  EXPECT_EQ(muon.scheduler.name, SchedulerName::linear_decay);
  EXPECT_EQ(muon.model.pool_norm_gelu, PoolNormGeluKernel::aten);
  EXPECT_DOUBLE_EQ(muon.model.logit_divisor, 256);
  EXPECT_TRUE(muon.precision.half_weights);
  EXPECT_NE(error_of("optimizer: {muon_ns_steps: 0}\n").find("optimizer.muon_ns_steps"), std::string::npos);
}

// The new keys' ranges at their edges: refused just outside, taken at the edge and just inside.
TEST(ConfigLoader, MuonAndFastNetKeysHoldTheirRanges) {
  const std::pair<std::string, bool> cases[] = {
      {"optimizer: {muon_ns_steps: 0}", false},    {"optimizer: {muon_ns_steps: 1}", true},
      {"optimizer: {muon_ns_steps: 20}", true},    {"optimizer: {muon_ns_steps: 21}", false},
      {"optimizer: {muon_lr: 0}", false},          {"optimizer: {muon_lr: 0.001}", true},
      {"optimizer: {muon_momentum: 0}", true},     {"optimizer: {muon_momentum: 1}", false},
      {"model: {head_lr_scale: 0}", false},        {"model: {head_lr_scale: 0.5}", true},
      {"model: {logit_divisor: 0}", false},        {"model: {logit_divisor: 0.5}", true},
      {"optimizer: {nesterov: true, momentum: 0.9}", true},
  };
  for (const auto& [yaml, taken] : cases) {
    const std::string error = error_of(yaml + "\n");
    EXPECT_EQ(error.empty(), taken) << yaml << ": " << error;
  }
}

// distributed.interface: auto or a Linux interface name (1 to 15 characters, none of "/ \t\n=,").
TEST(ConfigLoader, InterfaceNamesHoldTheirEdges) {
  const std::string fifteen(15, 'e'), sixteen(16, 'e');
  for (const std::string& name : {std::string("auto"), std::string("e"), std::string("eth1"), fifteen})
    EXPECT_EQ(error_of("distributed: {interface: \"" + name + "\"}\n"), "") << name;
  const std::string empty = error_of("distributed: {interface: \"\"}\n");
  EXPECT_NE(empty.find("key 'distributed.interface'"), std::string::npos) << empty;
  EXPECT_NE(empty.find("give an interface name such as eth1, or auto"), std::string::npos) << empty;
  for (const std::string& name : {sixteen, std::string("a/b"), std::string("a b"), std::string("a=b"), std::string("a,b")}) {
    const std::string msg = error_of("distributed: {interface: \"" + name + "\"}\n");
    EXPECT_NE(msg.find("'" + name + "' is not a network interface name"), std::string::npos) << name << ": " << msg;
  }
}

// Every control character (C0, DEL, C1) in every name a config turns into a path is an error naming the key and
// the character (never printing it); printable names, spaces and non-ASCII letters included, pass.
TEST(ConfigValidation, NamesThatBecomePathsRefuseEveryControlCharacter) {
  const std::vector<std::pair<std::string, std::string>> keys = {
      {"output", "name"}, {"output", "dir"}, {"data", "path"}, {"distributed", "timeline"}, {"profile", "trace"}};
  std::vector<int> controls;
  for (int code = 0; code < 0x20; ++code) controls.push_back(code);
  for (int code = 0x7F; code < 0xA0; ++code) controls.push_back(code);
  for (const auto& [section, name] : keys) {
    const std::string key = section + "." + name;
    for (const int code : controls) {
      char escape[16];
      std::snprintf(escape, sizeof(escape), code < 0x80 ? "\\x%02x" : "\\u%04x", code);
      const std::string msg = error_of(section + ": {" + name + ": \"ab" + escape + "c\"}\n");
      char expected[32];
      std::snprintf(expected, sizeof(expected), "U+%04X at byte 2", code);
      EXPECT_NE(msg.find("key '" + key + "'"), std::string::npos) << key << " " << expected << ": " << msg;
      EXPECT_NE(msg.find(std::string("control character (") + expected + ")"), std::string::npos)
          << key << " " << expected << ": " << msg;
    }
    const auto c = parse_config(section + ": {" + name + ": \"run 1-\\u00e4~\"}\n", "run.yaml");
    const std::string value = key == "output.name" ? c.output.name : key == "output.dir" ? c.output.dir
                              : key == "data.path" ? c.data.path : key == "distributed.timeline"
                                  ? c.distributed.timeline : c.profile.trace;
    EXPECT_EQ(value, "run 1-\xc3\xa4~") << key;
  }
}

TEST(ConfigLoader, EditDistance) {
  EXPECT_EQ(edit_distance("optimzer", "optimizer"), 1u);
  EXPECT_EQ(edit_distance("", "abc"), 3u);
  EXPECT_EQ(edit_distance("kitten", "sitting"), 3u);
}

TEST(ConfigLoader, ReferenceListsEveryKey) {
  const auto text = config_reference();
  for (const char* key : {"model.name", "data.remainder", "distributed.stall_timeout_s", "precision.dtype",
                          "regularization.label_smoothing", "train.accumulation_steps"})
    EXPECT_NE(text.find(key), std::string::npos) << key;
}

// Every config shipped in configs/ must load as written (sweep files carry a sweep: block).
TEST(ShippedConfigs, AllLoad) {
  namespace fs = std::filesystem;
  int count = 0;
  for (const auto& entry : fs::recursive_directory_iterator(fs::path(ft::test::source_dir()) / "configs")) {
    if (entry.path().extension() != ".yaml") continue;
    LoadOptions options;
    options.allow_sweep_block = true;
    EXPECT_NO_THROW(load_config(entry.path().string(), {}, options)) << entry.path();
    ++count;
  }
  EXPECT_GT(count, 0);
}

}  // namespace
}  // namespace ft
