// Every configuration key of fusetrain, its type, help text and allowed values, bound to the Config field.
// Adding a key means adding one line here (a choice's names live in choices.h); loader.cpp knows no key.
#include "config/options.h"

#include <cmath>
#include <cstdio>
#include <limits>
#include <optional>
#include <sstream>

#include "config/config_error.h"
#include "config/number_text.h"
#include "runtime/error.h"

namespace ft {
namespace {

template <typename T>
const char* type_name() {
  if constexpr (std::is_same_v<T, bool>) return "bool";
  else if constexpr (std::is_integral_v<T>) return "int";
  else if constexpr (std::is_floating_point_v<T>) return "float";
  else return "string";
}

// "an int", "a float": the article for type_name() in messages.
template <typename T>
const char* a_type_name() {
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) return "an int";
  else if constexpr (std::is_same_v<T, bool>) return "a bool";
  else if constexpr (std::is_floating_point_v<T>) return "a float";
  else return "a string";
}

template <typename T>
T convert(const YAML::Node& node, const ConfigPlace& where) {
  config_require(node.IsScalar(), where, "expected ", a_type_name<T>(), " value, got a ",
             node.IsMap() ? "map" : node.IsSequence() ? "list" : "null");
  try {
    if constexpr (std::is_same_v<T, bool>) {
      return node.as<bool>();
    } else if constexpr (std::is_integral_v<T>) {
      // yaml-cpp accepts "1.5" for int by truncation on some versions; insist on an integer literal.
      const std::string text = node.Scalar();
      config_require(text.find_first_of(".eE") == std::string::npos || text.rfind("0x", 0) == 0, where,
                     "expected an integer, got '", text, "'");
      return node.as<T>();
    } else {
      return node.as<T>();
    }
  } catch (const YAML::Exception&) {
    // An integer this field cannot hold ("-1" for an unsigned seed): say which ones it can.
    const std::string& text = node.Scalar();
    const bool integer = !text.empty() && text.find_first_not_of("+-0123456789") == std::string::npos;
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>)
      config_require(!integer, where, "'", text, "' is out of range: expected an integer from ",
                     +std::numeric_limits<T>::min(), " to ", +std::numeric_limits<T>::max());
    throw ConfigError(where, cat("expected ", a_type_name<T>(), " value, got '", node.Scalar(), "'"));
  }
}

using Check = std::function<void(double, const ConfigPlace&)>;

Check at_least(double lo) {
  return [lo](double v, const ConfigPlace& where) {
    config_require(v >= lo, where, "must be >= ", lo, ", got ", v);
  };
}
Check above(double lo) {
  return [lo](double v, const ConfigPlace& where) {
    config_require(v > lo, where, "must be > ", lo, ", got ", v);
  };
}
Check between(double lo, double hi) {
  return [lo, hi](double v, const ConfigPlace& where) {
    config_require(v >= lo && v <= hi, where, "must be between ", lo, " and ", hi, ", got ", v);
  };
}

using TextCheck = std::function<void(const std::string&, const ConfigPlace&)>;

// The first control character of `text` (C0, DEL, or C1 written as UTF-8) as "U+000A at byte 3"; "" when none.
std::string first_control_character(const std::string& text) {
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto byte = static_cast<unsigned char>(text[i]);
    const auto next = i + 1 < text.size() ? static_cast<unsigned char>(text[i + 1]) : 0u;
    const bool c1 = byte == 0xC2 && next >= 0x80 && next <= 0x9F;
    if (byte >= 0x20 && byte != 0x7F && !c1) continue;
    char code[8];
    std::snprintf(code, sizeof(code), "U+%04X", c1 ? next : byte);
    return cat(code, " at byte ", i);
  }
  return "";
}

// A name the run turns into a path (a file or folder name, an HDF5 attribute, a line it prints) holds no
// control character; the message names the character without printing it.
void no_control_characters(const std::string& text, const ConfigPlace& where) {
  const std::string found = first_control_character(text);
  config_require(found.empty(), where, "holds a control character (", found,
                 "): a name that becomes a path holds none");
}

// A file name of its own, not a path: output.name must keep the run's files inside output.dir.
void plain_file_name(const std::string& name, const ConfigPlace& where) {
  no_control_characters(name, where);
  config_require(name.find('/') == std::string::npos, where, "'", name,
                 "' is a path, not a file name: put folders in output.dir and give output.name without '/'");
  config_require(name != "." && name != "..", where, "'", name, "' is not a file name");
}

// distributed.interface: auto, or what could name a Linux network interface (whether this node has it is
// checked where the run starts).
void network_interface_name(const std::string& name, const ConfigPlace& where) {
  config_require(!name.empty(), where, "give an interface name such as eth1, or auto");
  config_require(name.size() < 16 && name.find_first_of("/ \t\n=,") == std::string::npos, where, "'", name,
                 "' is not a network interface name (at most 15 characters, no '/', space, '=' or ',')");
}

class Builder {
 public:
  explicit Builder(std::vector<Option>& out) : out_(out) {}

  template <typename T>
  void number(const std::string& key, T* field, const std::string& help, Check check = nullptr) {
    out_.push_back({key, type_name<T>(), help,
                    [field, check](const YAML::Node& n, const ConfigPlace& where) {
                      const T v = convert<T>(n, where);
                      if constexpr (std::is_floating_point_v<T>)
                        config_require(std::isfinite(v), where, "must be a finite number");
                      if (check) check(static_cast<double>(v), where);
                      *field = v;
                    },
                    [field] {
                      // Floats as the shortest text that reads back the same: 0.9, not 0.90000000000000002.
                      if constexpr (std::is_floating_point_v<T>) return YAML::Node(shortest_number(*field));
                      else return YAML::Node(*field);
                    }});
  }

  void flag(const std::string& key, bool* field, const std::string& help) {
    out_.push_back({key, "bool", help,
                    [field](const YAML::Node& n, const ConfigPlace& where) { *field = convert<bool>(n, where); },
                    [field] { return YAML::Node(*field); }});
  }

  void text(const std::string& key, std::string* field, const std::string& help, TextCheck check = nullptr) {
    out_.push_back({key, "string", help,
                    [field, check](const YAML::Node& n, const ConfigPlace& where) {
                      *field = n.IsNull() ? std::string() : convert<std::string>(n, where);
                      if (check) check(*field, where);
                    },
                    [field] { return YAML::Node(*field); }});
  }

  // A choice setting: its names, the reference's type column and its messages come from Choices<E>.
  template <typename E>
  void choice(const std::string& key, E* field, const std::string& help) {
    const std::string list = choice_list<E>();
    out_.push_back({key, list, help,
                    [field, list](const YAML::Node& n, const ConfigPlace& where) {
                      const auto v = convert<std::string>(n, where);
                      const std::optional<E> value = parse_choice<E>(v);
                      config_require(value.has_value(), where, "'", v, "' is not one of ", list);
                      *field = *value;
                    },
                    [field] { return YAML::Node(std::string(choice_name(*field))); }});
  }

  void add(Option option) { out_.push_back(std::move(option)); }

 private:
  std::vector<Option>& out_;
};

// One item of model.layers (`at` names it in messages); `last` allows a linear without 'out'.
LayerSpec read_layer(const YAML::Node& item, const ConfigPlace& at, bool last) {
  static const std::vector<std::string> kKeys = {"type", "out", "kernel", "stride", "padding", "p"};
  LayerSpec spec;
  std::string type;
  if (item.IsScalar()) {
    type = item.Scalar();
  } else {
    config_require(item.IsMap(), at, "expected a layer map like {type: conv, out: 32}");
    for (const auto& kv : item) {
      const auto k = kv.first.Scalar();
      bool known = false;
      for (const auto& key : kKeys) known = known || key == k;
      config_require(known, at, "unknown layer key '", k, "' (valid: type, out, kernel, stride, padding, p)");
    }
    config_require(item["type"].IsDefined(), at, "a layer needs a 'type'");
    type = convert<std::string>(item["type"], at.narrowed(" type"));
    if (item["out"]) spec.out = convert<int>(item["out"], at.narrowed(" out"));
    if (item["kernel"]) spec.kernel = convert<int>(item["kernel"], at.narrowed(" kernel"));
    if (item["stride"]) spec.stride = convert<int>(item["stride"], at.narrowed(" stride"));
    if (item["padding"]) spec.padding = convert<int>(item["padding"], at.narrowed(" padding"));
    if (item["p"]) spec.p = convert<double>(item["p"], at.narrowed(" p"));
  }
  const std::optional<LayerType> parsed = parse_choice<LayerType>(type);
  config_require(parsed.has_value(), at, "unknown layer type '", type, "' (valid: ", choice_list<LayerType>(", "),
                 ")");
  spec.type = *parsed;
  config_require(spec.out >= 0 && spec.kernel >= 1 && spec.stride >= 1 && spec.padding >= -1, at,
                 "out, kernel, stride must be positive and padding >= -1");
  config_require(spec.p >= 0 && spec.p < 1, at, "dropout p must be in [0, 1)");
  const bool sized = spec.type == LayerType::conv || spec.type == LayerType::linear;
  config_require(!sized || spec.out > 0 || (spec.type == LayerType::linear && last), at, "a ", spec.type,
                 " layer needs 'out' > 0");
  return spec;
}

Option layers_option(std::vector<LayerSpec>* layers) {
  auto read = [layers](const YAML::Node& node, const ConfigPlace& where) {
    config_require(node.IsSequence(), where, "expected a list of layers like {type: conv, out: 32}");
    std::vector<LayerSpec> out;
    for (std::size_t i = 0; i < node.size(); ++i) {
      ConfigPlace at = where;
      at.key += cat("[", i, "]");
      out.push_back(read_layer(node[i], at, i + 1 == node.size()));
    }
    *layers = std::move(out);
  };
  auto value = [layers] {
    YAML::Node list(YAML::NodeType::Sequence);
    for (const auto& l : *layers) {
      YAML::Node item;
      item["type"] = std::string(choice_name(l.type));
      if (l.type == LayerType::conv || l.type == LayerType::linear) item["out"] = l.out;
      if (l.type == LayerType::conv || l.type == LayerType::maxpool || l.type == LayerType::avgpool) {
        item["kernel"] = l.kernel;
        item["stride"] = l.stride;
        item["padding"] = l.padding;
      }
      if (l.type == LayerType::dropout) item["p"] = shortest_number(l.p);
      list.push_back(item);
    }
    return list;
  };
  return {"model.layers", "list", "conv_stack layers, e.g. [{type: conv, out: 32}, relu, {type: maxpool, kernel: 2, stride: 2}]",
          read, value};
}

}  // namespace

std::vector<Option> option_table(Config& c) {
  std::vector<Option> t;
  Builder b(t);

  b.choice("model.name", &c.model.name, "network architecture");
  b.number("model.dropout", &c.model.dropout, "classifier dropout probability of simple_cnn", between(0, 0.99));
  b.number("model.width", &c.model.width, "base channel count of resnet9/resnet18/fast_cifar", at_least(1));
  b.number("model.whiten_bias_epochs", &c.model.whiten_bias_epochs,
           "fast_cifar: epochs the patch-whitening layer's bias trains, then it is frozen (0 = always trains)",
           at_least(0));
  b.number("model.norm_bias_lr_scale", &c.model.norm_bias_lr_scale,
           "fast_cifar: learning-rate multiplier of the BatchNorm biases (their weight decay is divided by it)",
           above(0));
  b.number("model.head_lr_scale", &c.model.head_lr_scale,
           "fast_cifar: learning-rate multiplier of the linear head (its weight decay is divided by it)", above(0));
  b.number("model.logit_divisor", &c.model.logit_divisor,
           "fast_cifar: the logits are the head's output divided by this (airbench94: 9; airbench94_muon: the "
           "head's width, 4 x model.width)", above(0));
  b.flag("model.head_unit_std", &c.model.head_unit_std,
         "fast_cifar: the head's initial weights are rescaled to standard deviation 1 (airbench94_muon)");
  b.flag("model.whiten_bias_uniform", &c.model.whiten_bias_uniform,
         "fast_cifar: the whitening layer's bias starts uniform in +-1/sqrt(fan-in), as a default convolution's "
         "(airbench94_muon), instead of zero");
  b.flag("model.whiten_bias_decay", &c.model.whiten_bias_decay,
         "fast_cifar: the whitening layer's bias rate falls linearly from its start to 0 at the end of "
         "model.whiten_bias_epochs (airbench94_muon) instead of following the schedule");
  b.choice("model.pool_norm_gelu", &c.model.pool_norm_gelu,
           "fast_cifar: max-pool -> BatchNorm -> GELU (and BatchNorm -> GELU) as ATen's operations (aten), as "
           "fusetrain's 2x2 max-pool kernel (a byte per window kept for backward, not ATen's 8-byte index) then "
           "ATen's BatchNorm and GELU (pool), or as one fused kernel pair (fused; on an H200 the pair took 1.4x "
           "ATen's time in the fast recipe); synchronised BatchNorm always takes ATen's for the fused pair");
  b.choice("model.conv_relu", &c.model.conv_relu,
           "conv+ReLU implementation: aten (cuDNN/oneDNN) or fused (hand-written CUDA kernel)");
  b.add(layers_option(&c.model.layers));
  b.flag("model.sync_batchnorm", &c.model.sync_batchnorm,
         "every BatchNorm layer normalises with the mean and variance of all ranks' images of the step, as "
         "torch.nn.SyncBatchNorm: per layer one small all-reduce in forward and one in backward, on a communicator "
         "of its own; running statistics stay the same on every rank. For small per-rank batches (e.g. 4 images). "
         "Needs a network with BatchNorm; not with distributed.reproducible, nor train.cuda_graphs on several ranks");

  b.text("data.path", &c.data.path, "folder with train-*.h5 and test-*.h5 shards from fusetrain-prep",
         no_control_characters);
  b.number("data.batch_size", &c.data.batch_size, "images per rank per micro-batch", at_least(1));
  b.number("data.test_batch_size", &c.data.test_batch_size, "images per rank per evaluation batch", at_least(1));
  b.choice("data.remainder", &c.data.remainder,
           "how ranks get equal steps per epoch: drop the tail or pad with repeated images");
  b.choice("data.shuffle", &c.data.shuffle,
           "local: each rank shuffles its own slice; global: one permutation of the whole split");
  b.flag("data.normalize", &c.data.normalize, "normalize with the shard's per-channel mean/std");
  b.number("data.limit_train", &c.data.limit_train, "use only the first N training images (0 = all)", at_least(0));
  b.number("data.limit_test", &c.data.limit_test, "use only the first N test images (0 = all)", at_least(0));
  b.number("data.augment.crop_padding", &c.data.augment.crop_padding,
           "random crop after reflect padding by this many pixels (0 = off)", between(0, 64));
  b.flag("data.augment.flip", &c.data.augment.flip, "random horizontal flip");
  b.flag("data.augment.alternate_flip", &c.data.augment.alternate_flip,
         "with flip: each image is flipped at random in the first epoch, then the opposite way each epoch");
  b.number("data.augment.cutout", &c.data.augment.cutout, "side of a random zeroed square (0 = off)", at_least(0));
  b.number("data.augment.brightness", &c.data.augment.brightness,
           "colour jitter: brightness factor uniform in [max(0, 1-x), 1+x] (0 = off; applied first)", between(0, 10));
  b.number("data.augment.contrast", &c.data.augment.contrast,
           "colour jitter: contrast factor in [max(0, 1-x), 1+x], towards the image's mean gray (0 = off)",
           between(0, 10));
  b.number("data.augment.saturation", &c.data.augment.saturation,
           "colour jitter: saturation factor in [max(0, 1-x), 1+x], towards each pixel's gray (0 = off)",
           between(0, 10));
  b.number("data.augment.rotation_degrees", &c.data.augment.rotation_degrees,
           "random rotation by an angle uniform in [-x, x] degrees, bilinear, fill 0 (0 = off)", between(0, 180));

  b.choice("optimizer.name", &c.optimizer.name,
           "optimizer (muon: each conv filter's SGD-momentum update orthogonalised by a Newton-Schulz iteration, "
           "SGD with momentum for every other parameter)");
  b.number("optimizer.lr", &c.optimizer.lr, "peak learning rate", above(0));
  b.number("optimizer.momentum", &c.optimizer.momentum, "SGD/RMSprop momentum (muon: of its SGD parameters)",
           between(0, 0.9999));
  b.flag("optimizer.nesterov", &c.optimizer.nesterov, "Nesterov momentum (SGD; muon: filters and SGD parameters)");
  b.number("optimizer.weight_decay", &c.optimizer.weight_decay, "L2 penalty (decoupled for adamw)", at_least(0));
  b.number("optimizer.beta1", &c.optimizer.beta1, "Adam beta1", between(0, 0.9999));
  b.number("optimizer.beta2", &c.optimizer.beta2, "Adam beta2", between(0, 0.999999));
  b.number("optimizer.eps", &c.optimizer.eps, "Adam/RMSprop epsilon", above(0));
  b.number("optimizer.alpha", &c.optimizer.alpha, "RMSprop smoothing constant", between(0, 0.999999));
  b.number("optimizer.muon_lr", &c.optimizer.muon_lr,
           "muon: learning rate of the conv filters (4-d weights), which follows the schedule as optimizer.lr does",
           above(0));
  b.number("optimizer.muon_momentum", &c.optimizer.muon_momentum,
           "muon: momentum of the conv filters (Nesterov with optimizer.nesterov)", between(0, 0.9999));
  b.number("optimizer.muon_ns_steps", &c.optimizer.muon_ns_steps,
           "muon: Newton-Schulz iterations orthogonalising each filter update", between(1, 20));
  b.choice("optimizer.implementation", &c.optimizer.implementation,
           "fused: ATen's fused kernels, one launch per parameter group, where an fp16 overflow skips the step on "
           "the device (sgd, adam, adamw, muon); per_tensor: LibTorch's loop over the tensors (muon's own for its "
           "filters); auto: fused on CUDA");

  b.choice("scheduler.name", &c.scheduler.name,
           "learning-rate schedule (onecycle: rise then cosine fall; linear: rise then straight fall; "
           "linear_decay: straight fall from the first step, min_lr + (lr - min_lr) x (1 - step / steps))");
  b.number("scheduler.warmup_epochs", &c.scheduler.warmup_epochs, "linear warm-up length in epochs", at_least(0));
  b.number("scheduler.warmup_start", &c.scheduler.warmup_start, "warm-up starts at lr * this", between(0, 1));
  b.number("scheduler.step_size", &c.scheduler.step_size, "step: epochs between decays", at_least(1));
  b.number("scheduler.gamma", &c.scheduler.gamma, "step: decay factor", between(0, 1));
  b.number("scheduler.min_lr", &c.scheduler.min_lr, "cosine/onecycle/linear floor", at_least(0));
  b.number("scheduler.pct_start", &c.scheduler.pct_start, "onecycle/linear: fraction of steps rising", between(0, 1));

  b.choice("precision.dtype", &c.precision.dtype,
           "training precision (fp16 uses dynamic loss scaling and needs CUDA; bf16 autocasts on CUDA and CPU)");
  b.number("precision.initial_scale", &c.precision.initial_scale, "fp16 initial loss scale", above(0));
  b.number("precision.growth_interval", &c.precision.growth_interval, "fp16: steps between scale growths", at_least(1));
  b.flag("precision.channels_last", &c.precision.channels_last, "NHWC memory format for convolutions");
  b.flag("precision.half_weights", &c.precision.half_weights,
         "fp16/bf16: conv and linear weights stored in precision.dtype instead of float32 (no recast each forward; "
         "the optimizer's state in that type too), BatchNorm's parameters and statistics in float32; fp16 keeps "
         "gradients scaled and the fused step unscales them in float32");

  b.number("regularization.label_smoothing", &c.regularization.label_smoothing,
           "cross-entropy label smoothing", between(0, 0.99));
  b.number("regularization.early_stopping_patience", &c.regularization.early_stopping_patience,
           "stop after N epochs without a better test loss (0 = off)", at_least(0));
  b.number("regularization.overfit_window", &c.regularization.overfit_window,
           "epochs of rising test loss while train loss falls that flag overfitting", at_least(1));

  b.number("train.epochs", &c.train.epochs, "epochs to train", at_least(1));
  b.number("train.accumulation_steps", &c.train.accumulation_steps,
           "micro-batches per optimizer step (gradient accumulation)", at_least(1));
  b.number("train.seed", &c.train.seed, "random seed (initialisation, shuffling, augmentation)");
  b.choice("train.device", &c.train.device, "compute device");
  b.number("train.threads", &c.train.threads, "CPU threads per rank (0 = cores / local ranks)", at_least(0));
  b.number("train.eval_every", &c.train.eval_every, "epochs between test evaluations", at_least(1));
  b.number("train.checkpoint_every", &c.train.checkpoint_every, "epochs between checkpoints (0 = off)", at_least(0));
  b.number("train.checkpoint_every_s", &c.train.checkpoint_every_s,
           "seconds between checkpoints: one is written at the first step after this long since the last "
           "(rank 0's clock), mid-epoch, and the run goes on (0 = off)",
           at_least(0));
  b.number("train.keep_checkpoints", &c.train.keep_checkpoints,
           "checkpoint files kept: the newest, <name>.ckpt, and older ones <name>.ckpt.1, .2, ...; a resume "
           "takes the newest that verifies",
           at_least(1));
  b.number("train.lookahead_every", &c.train.lookahead_every,
           "every N optimizer steps pull the weights towards a slow copy, which is kept at the end (0 = off)",
           at_least(0));
  b.choice("train.tta", &c.train.tta,
           "test-time augmentation: average the logits over flips (and 1-pixel translations)");
  b.number("train.loss_check_every", &c.train.loss_check_every,
           "optimizer steps between checks for a non-finite training loss (reading the flag synchronises a GPU); "
           "0 = every step on CPUs, every 50 on GPUs. A stop request always checks before it saves",
           at_least(0));
  b.flag("train.cuda_graphs", &c.train.cuda_graphs,
         "capture the training step (forward, loss, backward, optimizer) as a CUDA graph after 3 eager steps "
         "and replay it: one launch per step (several ranks: then one NCCL all-reduce and the optimizer). Needs a "
         "GPU, the fused optimizer, accumulation_steps 1, no compression or autotune, not fp64");
  b.number("train.warmup_steps", &c.train.warmup_steps,
           "training steps run before the clock starts, on state that is then put back exactly (weights, optimizer, "
           "lookahead, BatchNorm statistics, loss scale, random streams, counts): cuDNN's autotuning, kernel loading, "
           "the allocator's growth and, from 4 steps with train.cuda_graphs, the capture happen in them; the run's "
           "results are those of a run without them (0 = none)",
           at_least(0));
  b.number("train.max_steps", &c.train.max_steps,
           "optimizer steps to train, the last epoch cut short where they end (airbench94's 9.9 epochs at batch "
           "1024 are 476 steps); the schedule and lookahead span these steps, and train.epochs is not used "
           "(0 = train.epochs whole epochs)",
           at_least(0));
  b.flag("train.cudnn", &c.train.cudnn,
         "use cuDNN for ATen convolutions on GPUs (false: ATen's native CUDA kernels, for the conv+ReLU study)");

  b.choice("distributed.backend", &c.distributed.backend, "gradient all-reduce backend");
  b.number("distributed.stall_timeout_s", &c.distributed.stall_timeout_s,
           "seconds a rank may wait in a collective before the job aborts naming the missing ranks", above(0));
  b.number("distributed.bucket_mib", &c.distributed.bucket_mib, "fusion bucket size in MiB", above(0));
  b.number("distributed.first_bucket_mib", &c.distributed.first_bucket_mib,
           "size of the first (earliest) bucket in MiB", above(0));
  b.number("distributed.last_bucket_mib", &c.distributed.last_bucket_mib,
           "most of the last bucket in MiB (the gradients backward produces last; left to send when it ends)",
           above(0));
  b.choice("distributed.compression", &c.distributed.compression,
           "gradient wire format: fp16/bf16 halve the bytes; powersgd sends rank-r factors P and Q of each "
           "matrix-shaped gradient (conv weights as [out, in*kh*kw]) with error feedback, vectors as they are");
  b.number("distributed.powersgd_rank", &c.distributed.powersgd_rank,
           "with compression powersgd: the rank of each gradient matrix's approximation (1-4 usually; bytes grow "
           "with it)", at_least(1));
  b.number("distributed.powersgd_start_step", &c.distributed.powersgd_start_step,
           "with compression powersgd: optimizer steps all-reduced uncompressed before compression starts "
           "(PyTorch suggests about 10% of the run)", at_least(0));
  b.flag("distributed.autotune", &c.distributed.autotune,
         "at start, time a few fusion bucket sizes on the model's gradients and use the fastest "
         "(overrides bucket_mib and first_bucket_mib; the choice is recorded as autotuned_bucket_mib)");
  b.choice("distributed.allreduce", &c.distributed.allreduce,
           "all-reduce algorithm: flat (all ranks at once) or hierarchical (reduce inside each node, all-reduce "
           "among node leaders, broadcast inside each node; mpi backend only); auto = on several nodes with "
           "some node running several ranks, whichever of the two is faster at start (mpi), else flat");
  b.choice("distributed.mpi_algorithm", &c.distributed.mpi_algorithm,
           "how the mpi backend all-reduces a bucket (and the node leaders' step of the hierarchical one): ring "
           "(point-to-point messages to both neighbours at once, bandwidth-optimal), native (MPI_Iallreduce in "
           "chunks), or auto = ring for buckets of at least 1 MiB, native below");
  b.number("distributed.verify_replicas", &c.distributed.verify_replicas,
           "check parameters are identical across ranks every N steps (0 = off)", at_least(0));
  b.number("distributed.straggler_share", &c.distributed.straggler_share,
           "a rank whose compute per step exceeds the other ranks' median by more than this share in most steps is "
           "named at the end of the run, with the share of the step the others waited for it", above(0));
  b.flag("distributed.allow_device_sharing", &c.distributed.allow_device_sharing,
         "allow more ranks per node than GPUs (not with nccl)");
  b.text("distributed.timeline", &c.distributed.timeline, "Chrome-trace JSON file of communication phases",
         no_control_characters);
  b.flag("distributed.reproducible", &c.distributed.reproducible,
         "the same weights, bit for bit, on any number of ranks that divides distributed.micro_batches: each step "
         "is micro_batches micro-batches of data.batch_size images in the global order, each differentiated "
         "alone and summed exactly (needs data.shuffle global and a fixed train.threads)");
  b.number("distributed.micro_batches", &c.distributed.micro_batches,
           "with distributed.reproducible: micro-batches per optimizer step (the largest number of ranks to run "
           "on, or a multiple of it)", at_least(1));
  b.text("distributed.interface", &c.distributed.interface,
         "network interface every transport uses between ranks (e.g. eth1 or ib0, the same name on every "
         "node): Open MPI's TCP transport, Gloo's device and NCCL's sockets; auto = shared memory and "
         "loopback on one node, each transport's own choice on several",
         network_interface_name);
  b.number("profile.wait", &c.profile.wait, "operator profiler: optimizer steps before it starts", at_least(0));
  b.number("profile.warmup", &c.profile.warmup, "operator profiler: steps traced and discarded", at_least(0));
  b.number("profile.active", &c.profile.active, "operator profiler: steps recorded", at_least(1));
  b.number("profile.repeat", &c.profile.repeat,
           "operator profiler: cycles of wait, warm-up and active steps, each written to its own trace "
           "(the second to <trace stem>.cycle2<ext>, ...)", at_least(1));
  b.text("profile.trace", &c.profile.trace, "Chrome-trace JSON of operators and memory (\"\" = off)",
         no_control_characters);

  b.choice("elastic.batch", &c.elastic.batch,
           "on resuming at another number of ranks: global keeps the images per optimizer step (per-rank batch "
           "and train.accumulation_steps re-split over the new ranks, per-rank batch at most data.batch_size); "
           "local keeps data.batch_size per rank and scales optimizer.lr by elastic.lr_scaling");
  b.choice("elastic.lr_scaling", &c.elastic.lr_scaling,
           "with elastic.batch: local, the learning rate's factor for a global batch k times the first "
           "segment's: linear (k), sqrt (sqrt k) or none (1)");
  b.text("output.dir", &c.output.dir, "folder for results files and checkpoints",
         no_control_characters);
  b.text("output.name", &c.output.name,
         "results file stem, a file name without '/' (default: model-dataset-Nr-timestamp); when an earlier "
         "finished run holds it, this run takes name-2, name-3, ... and says so", plain_file_name);
  b.flag("output.save_model", &c.output.save_model,
         "at the end, write the trained network (weights, config, input shape, classes, mean/std) to "
         "<output.dir>/<name>.model for fusetrain evaluate, export and predict");
  b.flag("output.overwrite", &c.output.overwrite,
         "replace an earlier run's results and model files of the same output.name (and an existing "
         "distributed.timeline or profile.trace file) instead of giving this run a fresh numbered name");
  b.flag("output.tensorboard", &c.output.tensorboard,
         "rank 0 writes a TensorBoard event file while training, <output.dir>/<name>.tb/events.out.tfevents.*: "
         "per-step loss, learning rate, images/s, exposed communication and loss scale, per-epoch figures "
         "(global and each rank's), memory and the resolved config; a resumed run adds a file to the folder");
  b.number("output.tensorboard_every", &c.output.tensorboard_every,
           "optimizer steps between per-step TensorBoard points, counted within the epoch (the loss is read "
           "from the device only then); 0 = per-epoch points only", at_least(0));
  b.number("output.progress_every_s", &c.output.progress_every_s,
           "progress within an epoch (step, images/s, loss, time left): on a terminal one line kept up to "
           "date, elsewhere (files, pipes) a plain 'progress:' line every this many seconds; 0 = none",
           at_least(0));
  return t;
}

}  // namespace ft
