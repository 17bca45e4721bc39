// Where a training run writes (results, model, checkpoints) and the rule that keeps earlier runs' files:
// a new run whose name an earlier, finished run holds gets a fresh numbered name; only its own resume reuses one.
#pragma once

#include <functional>
#include <string>

#include "config/schema.h"

namespace ft {

class World;

struct RunPaths {
  std::string name, results, checkpoint, model;  // model: "" when output.save_model is off
  bool resumes = false;                           // a checkpoint of this run exists: it continues in place
  std::string renamed_from;                       // the name an earlier run holds, when this one was numbered
};

// The run's name: `wanted` itself when no earlier run finished under it, or when `overwrite` allows
// replacing its files, or when `has_checkpoint(wanted)` (this run, interrupted, resumes there); otherwise
// the first of wanted-2, wanted-3, ... that is free or has a checkpoint of its own. `finished(name)`: the
// results or model file of `name` exists.
std::string choose_run_name(const std::string& wanted, bool overwrite,
                            const std::function<bool(const std::string&)>& finished,
                            const std::function<bool(const std::string&)>& has_checkpoint);

// Collective: rank 0 looks at output.dir and decides, every rank receives the same paths. Without
// output.name the results are named "<model>-<data>-<N>r-<UTC time>" and the checkpoint by the run's
// fingerprint, so a restarted job finds it whatever its results are called.
RunPaths run_paths(const Config& config, const World& world);

// Rank 0, before any training: every output of the run can be written (output.dir, the results and model
// paths, distributed.timeline, the `world_size` ranks' profile.trace files) and none replaces a file this
// run may not replace; says so when the run was given a numbered name. Throws ft::Error naming the path
// and the key.
// `inputs`: (how named, path) of the files the run reads (its config file, its data shards); no output may
// be one of them, whatever output.overwrite says.
void claim_run_outputs(const Config& config, const RunPaths& paths, int world_size,
                       const std::vector<std::pair<std::string, std::string>>& inputs = {});

}  // namespace ft
