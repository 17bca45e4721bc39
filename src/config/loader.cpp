// Walks a YAML document against the option table: known keys are read into Config, unknown ones are
// reported with file:line:column and the nearest valid key; --set overrides are merged in before the walk.
#include "config/loader.h"

#include <algorithm>
#include <map>
#include <set>
#include <sstream>

#include "config/config_error.h"
#include "config/options.h"
#include "io/text_file.h"
#include "runtime/error.h"

namespace ft {
namespace {

struct Walk {
  const std::vector<Option>& table;
  const std::string& origin;
  const std::map<std::string, std::string>& overridden;  // key -> "--set key=value"
  const LoadOptions& options;

  ConfigPlace where(const std::string& key, const YAML::Node& node) const {
    const auto it = overridden.find(key);
    if (it != overridden.end()) return {it->second, 0, 0, key, ""};
    const auto mark = node.Mark();
    if (mark.line < 0) return {origin, 0, 0, key, ""};
    return {origin, mark.line + 1, mark.column + 1, key, ""};
  }

  const Option* find(const std::string& key) const {
    for (const auto& o : table)
      if (o.key == key) return &o;
    return nullptr;
  }

  bool is_section(const std::string& prefix) const {
    for (const auto& o : table)
      if (o.key.rfind(prefix + ".", 0) == 0) return true;
    return false;
  }

  std::string nearest(const std::string& key) const {
    std::set<std::string> candidates;
    for (const auto& o : table) {
      for (std::size_t dot = o.key.find('.'); dot != std::string::npos; dot = o.key.find('.', dot + 1))
        candidates.insert(o.key.substr(0, dot));
      candidates.insert(o.key);
    }
    std::string best;
    std::size_t best_distance = std::string::npos;
    for (const auto& c : candidates) {
      const auto d = edit_distance(key, c);
      if (d < best_distance) best_distance = d, best = c;
    }
    return best;
  }

  void map(const YAML::Node& node, const std::string& prefix) const {
    std::map<std::string, YAML::Node> seen;
    for (const auto& kv : node) {
      const std::string name = kv.first.Scalar();
      const std::string key = prefix.empty() ? name : prefix + "." + name;
      const auto [first, fresh] = seen.emplace(name, kv.first);
      if (!fresh) throw ConfigError(where(key, kv.first), cat("duplicate key: '", key, "' is also set at line ",
                                                              first->second.Mark().line + 1, "; keep one of them"));
      if (prefix.empty() && name == "sweep" && options.allow_sweep_block) continue;
      if (const Option* option = find(key)) {
        option->read(kv.second, where(key, kv.first));
      } else if (is_section(key)) {
        if (kv.second.IsNull()) continue;
        config_require(kv.second.IsMap(), where(key, kv.first), "expected a map of settings");
        map(kv.second, key);
      } else {
        throw ConfigError(where(key, kv.first), cat("unknown key (did you mean '", nearest(key), "'?)"));
      }
    }
  }
};

// "; line N holds a tab ..." for the first line with a tab (YAML forbids them in indentation and
// yaml-cpp's message never says so), else "".
std::string tab_hint(const std::string& text) {
  std::istringstream lines(text);
  int number = 0;
  for (std::string line; std::getline(lines, line);) {
    ++number;
    if (line.find('\t') != std::string::npos)
      return cat("; line ", number, " holds a tab character: YAML indents and separates with spaces only");
  }
  return "";
}

YAML::Node parse_yaml(const std::string& text, const std::string& origin) {
  try {
    return YAML::Load(text);
  } catch (const YAML::ParserException& e) {
    throw ConfigError({origin, e.mark.line + 1, e.mark.column + 1, "", ""},
                      cat("malformed YAML: ", e.msg, tab_hint(text)));
  }
}

// Sets doc[a][b][c] = value for key "a.b.c", creating maps on the way.
void set_path(YAML::Node doc, const std::string& key, const YAML::Node& value, const std::string& origin) {
  std::vector<std::string> parts;
  std::stringstream in(key);
  for (std::string part; std::getline(in, part, '.');) parts.push_back(part);
  config_require(!parts.empty(), {origin}, "empty key");
  YAML::Node node = doc;
  for (std::size_t i = 0; i + 1 < parts.size(); ++i) {
    config_require(!node[parts[i]] || node[parts[i]].IsMap(), {origin}, "'", parts[i], "' is not a section");
    if (!node[parts[i]]) node[parts[i]] = YAML::Node(YAML::NodeType::Map);
    YAML::Node child = node[parts[i]];
    node.reset(child);
  }
  node[parts.back()] = value;
}

}  // namespace

std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = up;
    }
  }
  return row[b.size()];
}

Config parse_config(const std::string& yaml, const std::string& origin,
                    const std::vector<std::string>& overrides, const LoadOptions& options) {
  YAML::Node doc = parse_yaml(yaml, origin);
  if (doc.IsNull()) doc = YAML::Node(YAML::NodeType::Map);
  config_require(doc.IsMap(), {origin}, "expected a map of sections (model:, data:, optimizer:, ...)");

  std::map<std::string, std::string> overridden;
  for (const auto& o : overrides) {
    const auto eq = o.find('=');
    const std::string label = cat("--set ", o);
    config_require(eq != std::string::npos && eq > 0, {label}, "expected key=value, e.g. optimizer.lr=0.05");
    const std::string key = o.substr(0, eq);
    set_path(doc, key, parse_yaml(o.substr(eq + 1), label), label);
    overridden[key] = label;
  }

  Config config;
  const auto table = option_table(config);
  Walk{table, origin, overridden, options}.map(doc, "");
  return config;
}

Config load_config(const std::string& path, const std::vector<std::string>& overrides,
                   const LoadOptions& options) {
  return parse_config(read_text_file(path, "config file"), path, overrides, options);
}

std::string dump_config(const Config& config) {
  Config copy = config;
  YAML::Node doc(YAML::NodeType::Map);
  for (const auto& option : option_table(copy)) set_path(doc, option.key, option.value(), "dump");
  YAML::Emitter out;
  out << doc;
  return std::string(out.c_str()) + "\n";
}

std::string config_reference() {
  Config defaults;
  std::ostringstream out;
  std::string section;
  for (const auto& option : option_table(defaults)) {
    const std::string top = option.key.substr(0, option.key.find('.'));
    if (top != section) out << (section.empty() ? "" : "\n") << top << ":\n", section = top;
    YAML::Emitter value;
    value << YAML::Flow << option.value();
    out << "  " << option.key << " (" << option.type << ", default " << value.c_str() << ")\n      "
        << option.help << "\n";
  }
  return out.str();
}

namespace {

// What distributed.reproducible needs: an order of the data that does not depend on the ranks, one kernel
// schedule per micro-batch (a fixed thread count), and nothing that rounds differently on another split.
void require_reproducible_setup(const Config& c) {
  const std::string why = "distributed.reproducible needs ";
  FT_REQUIRE(c.data.shuffle == Shuffle::global, why, "data.shuffle global (one order of the data for any number of "
             "ranks), not '", c.data.shuffle, "'");
  FT_REQUIRE(c.train.accumulation_steps == 1, why, "train.accumulation_steps 1: distributed.micro_batches (",
             c.distributed.micro_batches, ") splits each step instead");
  FT_REQUIRE(c.train.threads > 0, why, "a fixed train.threads (the same on every rank and in every run): a kernel "
             "with another thread count may sum in another order");
  FT_REQUIRE(c.precision.dtype != Precision::fp16, why, "precision fp32, bf16 or fp64: fp16's loss scale depends "
             "on overflows of the local micro-batches");
  FT_REQUIRE(c.distributed.compression == Compression::none, why, "distributed.compression none: the exact sums "
             "travel as 64-bit integers");
  FT_REQUIRE(!c.model.sync_batchnorm, why, "model.sync_batchnorm false: its BatchNorm statistics are those of each "
             "micro-batch of the global order, so that the bits do not depend on the number of ranks; statistics "
             "over all ranks' images would change with it");
}

// Networks whose BatchNorm layers model.sync_batchnorm would synchronise: the ResNets and the fast net have
// them; a conv_stack where model.layers holds a bn.
bool has_batch_norm(const ModelConfig& m) {
  if (m.name == ModelName::simple_cnn) return false;
  if (m.name != ModelName::conv_stack) return true;
  for (const LayerSpec& layer : m.layers)
    if (layer.type == LayerType::bn) return true;
  return false;
}

// What compression powersgd cannot carry: fp16's loss scale changes between steps (the carried error would be
// in the wrong scale) and an overflowing step would put inf into it.
void require_powersgd_setup(const Config& c) {
  FT_REQUIRE(c.precision.dtype != Precision::fp16, "distributed.compression 'powersgd' needs precision.dtype fp32, "
             "bf16 or fp64, not 'fp16': the error feedback it carries from step to step would be kept in a loss "
             "scale that changes, and an overflowing step would put inf into it");
}

// What train.cuda_graphs needs: a GPU, and a step whose every launch is the same (static shapes, no host
// decision inside it, optimizer state made before the capture).
void require_graphable_setup(const Config& c, bool cuda) {
  const std::string why = "train.cuda_graphs needs ";
  FT_REQUIRE(cuda, why, "a CUDA device: this run trains on the CPU (train.device '", c.train.device, "')");
  FT_REQUIRE(c.train.accumulation_steps == 1, why, "train.accumulation_steps 1 (one forward and backward per "
             "captured step), not ", c.train.accumulation_steps);
  FT_REQUIRE(c.precision.dtype != Precision::fp64, why,
             "precision fp32, bf16 or fp16, not 'fp64' (the gradients live in one float32 buffer)");
  FT_REQUIRE(!c.distributed.reproducible, why, "distributed.reproducible false: the exact sums run their own step");
  FT_REQUIRE(c.distributed.compression == Compression::none && !c.distributed.autotune, why,
             "distributed.compression none and distributed.autotune false: several ranks all-reduce one float32 "
             "gradient buffer in place, without buckets");
  FT_REQUIRE(c.optimizer.implementation != OptimizerImplementation::per_tensor &&
                 c.optimizer.name != OptimizerName::rmsprop,
             why, "the fused optimizer step (sgd, adam, adamw or muon with optimizer.implementation auto or fused)");
}

// What precision.half_weights needs: a half type to store the weights in and, for fp16, the fused step, which
// divides the loss scale out of the still-scaled fp16 gradients in float32.
void require_half_weights_setup(const Config& c, bool cuda) {
  const std::string why = "precision.half_weights needs ";
  FT_REQUIRE(cuda || c.optimizer.implementation != OptimizerImplementation::fused, why, "on the CPU "
             "optimizer.implementation auto or per_tensor: ATen's fused CPU kernels leave most of a float16 or "
             "bfloat16 parameter unchanged");
  FT_REQUIRE(c.precision.dtype == Precision::fp16 || c.precision.dtype == Precision::bf16, why,
             "precision.dtype fp16 or bf16 (the type the weights are stored in), not '", c.precision.dtype, "'");
  FT_REQUIRE(c.precision.dtype != Precision::fp16 || (c.optimizer.implementation != OptimizerImplementation::per_tensor &&
                                                      c.optimizer.name != OptimizerName::rmsprop),
             why, "with fp16 the fused optimizer step (sgd, adam, adamw or muon with optimizer.implementation auto "
             "or fused): fp16 gradients stay scaled and only the fused step divides the scale out, in float32");
  FT_REQUIRE(!c.distributed.reproducible, why, "distributed.reproducible false: its exact sums are of float32 "
             "gradients");
}

}  // namespace

void validate_for_device(const Config& c, bool cuda_available, const std::string& why_not) {
  const bool cuda =
      c.train.device == DeviceChoice::cuda || (c.train.device == DeviceChoice::automatic && cuda_available);
  FT_REQUIRE(c.train.device != DeviceChoice::cuda || cuda_available,
             "train.device is 'cuda' but no CUDA device is available to this process",
             why_not.empty() ? std::string() : cat(": ", why_not));
  FT_REQUIRE(c.distributed.backend != BackendName::nccl || cuda,
             "distributed.backend 'nccl' needs CUDA devices; use 'mpi' or 'gloo' on CPU");
  FT_REQUIRE(c.distributed.allreduce != AllreduceAlgorithm::hierarchical ||
                 c.distributed.backend == BackendName::mpi,
             "distributed.allreduce 'hierarchical' is built on MPI only; use distributed.backend 'mpi', or "
             "'flat' or 'auto' with '", c.distributed.backend, "'");
  FT_REQUIRE(!(c.distributed.backend == BackendName::nccl && c.distributed.allow_device_sharing),
             "distributed.allow_device_sharing cannot be used with backend 'nccl': NCCL cannot run two "
             "ranks on one GPU; use 'mpi' or 'gloo' to share devices");
  // Before fp16's own device check: the combination is refused on any host.
  if (c.distributed.compression == Compression::powersgd) require_powersgd_setup(c);
  FT_REQUIRE(cuda || c.precision.dtype != Precision::fp16,
             "precision.dtype 'fp16' needs a CUDA device; use bf16 (CPU autocast) or fp32 on CPU");
  if (c.train.cuda_graphs) require_graphable_setup(c, cuda);
  if (c.precision.half_weights) require_half_weights_setup(c, cuda);
  FT_REQUIRE(c.model.conv_relu != ConvReluKernel::fused || c.precision.dtype != Precision::fp64,
             "model.conv_relu 'fused' computes in float32 (fp16 and bf16 autocast to it); precision.dtype 'fp64' "
             "needs model.conv_relu 'aten'");
  FT_REQUIRE(c.model.conv_relu != ConvReluKernel::fused || !c.precision.channels_last,
             "model.conv_relu 'fused' reads NCHW tensors: with precision.channels_last every forward would copy "
             "its input and weights into NCHW; use one or the other");
  FT_REQUIRE(cuda || c.model.conv_relu != ConvReluKernel::fused,
             "model.conv_relu 'fused' is a CUDA kernel; use 'aten' on CPU");
  FT_REQUIRE(c.model.name != ModelName::conv_stack || !c.model.layers.empty(),
             "model.name 'conv_stack' needs model.layers");
  FT_REQUIRE(c.distributed.first_bucket_mib <= c.distributed.bucket_mib,
             "distributed.first_bucket_mib (", c.distributed.first_bucket_mib,
             ") must not exceed distributed.bucket_mib (", c.distributed.bucket_mib, ")");
  FT_REQUIRE(c.distributed.last_bucket_mib <= c.distributed.bucket_mib,
             "distributed.last_bucket_mib (", c.distributed.last_bucket_mib,
             ") must not exceed distributed.bucket_mib (", c.distributed.bucket_mib, ")");
  FT_REQUIRE(!c.data.path.empty(), "data.path is not set: point it at a folder written by fusetrain-prep");
  FT_REQUIRE(!c.model.sync_batchnorm || has_batch_norm(c.model), "model.sync_batchnorm: model.name '",
             c.model.name, "'", c.model.name == ModelName::conv_stack ? " (model.layers without a bn layer)" : "",
             " has no BatchNorm layer to synchronise; set it to false or add {type: bn} layers");
  if (c.distributed.reproducible) require_reproducible_setup(c);
}

}  // namespace ft
