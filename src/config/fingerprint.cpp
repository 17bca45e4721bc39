// Resume fingerprints: neutral keys reset to their defaults before the config is dumped, so that a run
// moved to another device or backend still matches; differences are listed key by key for the error.
#include "config/fingerprint.h"

#include <yaml-cpp/yaml.h>

#include <cstdio>
#include <map>

#include "config/loader.h"
#include "config/number_text.h"
#include "runtime/error.h"

namespace ft {
namespace {

// Flattens a YAML map into dotted keys -> scalar (or flow-style) text.
void flatten(const YAML::Node& node, const std::string& prefix, std::map<std::string, std::string>& out) {
  if (node.IsMap()) {
    for (const auto& kv : node) {
      const std::string key = kv.first.Scalar();
      flatten(kv.second, prefix.empty() ? key : prefix + "." + key, out);
    }
    return;
  }
  if (node.IsScalar()) {
    out[prefix] = shortest_number_text(node.Scalar());
    return;
  }
  YAML::Emitter text;
  text << YAML::Flow << node;
  out[prefix] = text.c_str();
}

std::map<std::string, std::string> flat(const std::string& yaml) {
  std::map<std::string, std::string> out;
  try {
    flatten(YAML::Load(yaml), "", out);
  } catch (const YAML::Exception&) {
    out["(unreadable fingerprint)"] = yaml.substr(0, 40);
  }
  return out;
}

}  // namespace

std::string run_fingerprint(const Config& config) {
  const Config defaults;
  Config c = config;
  c.train.epochs = defaults.train.epochs;
  c.train.device = defaults.train.device;
  c.train.threads = defaults.train.threads;
  c.train.eval_every = defaults.train.eval_every;
  c.train.checkpoint_every = defaults.train.checkpoint_every;
  c.train.checkpoint_every_s = defaults.train.checkpoint_every_s;
  c.train.keep_checkpoints = defaults.train.keep_checkpoints;
  c.train.loss_check_every = defaults.train.loss_check_every;
  c.train.cuda_graphs = defaults.train.cuda_graphs;  // how the step is launched, not what it computes
  c.train.warmup_steps = defaults.train.warmup_steps;  // its state is thrown away: the run computes the same
  c.train.max_steps = defaults.train.max_steps;        // how long to train, as train.epochs
  c.precision.channels_last = defaults.precision.channels_last;
  c.profile = defaults.profile;
  c.output.save_model = defaults.output.save_model;
  c.output.overwrite = defaults.output.overwrite;
  c.output.dir = defaults.output.dir;  // a run folder moved to another disk is the same run
  c.output.tensorboard = defaults.output.tensorboard;  // watching a run does not change it
  c.output.tensorboard_every = defaults.output.tensorboard_every;
  c.output.progress_every_s = defaults.output.progress_every_s;
  c.elastic = defaults.elastic;
  const auto kept = c.distributed;  // what changes the numbers: compression (and PowerSGD's settings), and the
                                   // reproducible mode's split
  c.distributed = defaults.distributed;
  c.distributed.compression = kept.compression;
  c.distributed.powersgd_rank = kept.powersgd_rank;
  c.distributed.powersgd_start_step = kept.powersgd_start_step;
  c.distributed.reproducible = kept.reproducible;
  c.distributed.micro_batches = kept.micro_batches;
  return dump_config(c);
}

std::vector<std::string> fingerprint_differences(const std::string& stored, const std::string& current) {
  const auto before = flat(stored), now = flat(current), defaults = flat(run_fingerprint(Config{}));
  std::vector<std::string> out;
  for (const auto& [key, value] : before) {
    const auto it = now.find(key);
    const std::string other = it == now.end() ? "(absent)" : it->second;
    if (other != value) out.push_back(cat(key, ": ", value, " in the checkpoint, ", other, " now"));
  }
  // A key newer than the checkpoint: the run that wrote it computed as the key's default does, so the
  // default matches; any other value is a difference.
  for (const auto& [key, value] : now) {
    if (before.count(key)) continue;
    const auto it = defaults.find(key);
    if (it == defaults.end() || it->second != value)
      out.push_back(cat(key, ": (absent) in the checkpoint, ", value, " now"));
  }
  return out;
}

std::string fingerprint_digest(const std::string& text) {
  std::uint64_t hash = 1469598103934665603ull;
  for (unsigned char c : text) hash = (hash ^ c) * 1099511628211ull;
  char hex[17];
  std::snprintf(hex, sizeof(hex), "%016llx", static_cast<unsigned long long>(hash));
  return hex;
}

}  // namespace ft
