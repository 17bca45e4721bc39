// Run names and output claims: rank 0 reads output.dir once and broadcasts its choice, so every rank
// writes and checkpoints under the same name; every path is claimed through io/output_claim.h.
#include "checkpoint/run_outputs.h"

#include <cstdio>
#include <ctime>

#include "config/fingerprint.h"
#include "io/atomic_file.h"
#include "io/output_claim.h"
#include "io/paths.h"
#include "monitor/op_profiler.h"
#include "runtime/error.h"
#include "runtime/world.h"
#include "checkpoint/checkpoint_files.h"

namespace ft {
namespace {

// "<model>-<data folder>": the start of default checkpoint names (a run may resume on another number of
// ranks) and, with "-<ranks>r-<time>", of default results names.
std::string default_stem(const Config& config) {
  const std::string data_name = paths::filename(paths::normal(config.data.path));
  return cat(config.model.name, "-", data_name);
}

std::string utc_now() {
  const std::time_t now = std::time(nullptr);
  char text[32];
  std::strftime(text, sizeof(text), "%Y%m%d-%H%M%S", std::gmtime(&now));
  return text;
}

bool checkpoints_exist(const std::string& base) {
  const CheckpointFiles files = find_checkpoints(base);
  return files.next || !files.ages.empty();
}

// The paths of a run named `name`; `checkpoint_stem` names its checkpoint (the name itself when
// output.name is set).
RunPaths paths_named(const Config& config, const std::string& name, const std::string& checkpoint_stem) {
  RunPaths p;
  p.name = name;
  p.results = paths::join(config.output.dir, name + ".h5");
  p.checkpoint = paths::join(config.output.dir, checkpoint_stem + ".ckpt");
  if (config.output.save_model) p.model = paths::join(config.output.dir, name + ".model");
  return p;
}

// Rank 0's choice of name and paths.
RunPaths decide(const Config& config, int world_size) {
  const std::string& dir = config.output.dir;
  // Files, not anything of the name: a folder in a results file's place is an error claim_run_outputs names.
  auto finished = [&](const std::string& name) {
    return paths::is_regular_file(paths::join(dir, name + ".h5")) ||
           paths::is_regular_file(paths::join(dir, name + ".model"));
  };
  const bool named = !config.output.name.empty();
  auto has_checkpoint = [&](const std::string& name) {
    return named && checkpoints_exist(paths::join(dir, name + ".ckpt"));
  };
  const std::string wanted =
      named ? config.output.name : cat(default_stem(config), "-", world_size, "r-", utc_now());
  const std::string name = choose_run_name(wanted, config.output.overwrite, finished, has_checkpoint);
  const std::string checkpoint_stem =
      named ? name : cat(default_stem(config), "-", fingerprint_digest(run_fingerprint(config)));
  RunPaths p = paths_named(config, name, checkpoint_stem);
  p.resumes = checkpoints_exist(p.checkpoint);
  if (name != wanted) p.renamed_from = wanted;
  return p;
}

void note(const std::string& text) {
  std::printf("note: %s\n", text.c_str());
  std::fflush(stdout);
}

// A file the run writes under a path the user gave in the config: kept unless output.overwrite allows
// replacing it or the run resumes (its own earlier segment wrote it).
void claim_configured(const std::string& key, const std::string& path, const Config& config, bool resumes,
                      const std::vector<std::pair<std::string, std::string>>& inputs) {
  claim_output({path, key, "output.overwrite: true", config.output.overwrite || resumes, inputs});
}

}  // namespace

std::string choose_run_name(const std::string& wanted, bool overwrite,
                            const std::function<bool(const std::string&)>& finished,
                            const std::function<bool(const std::string&)>& has_checkpoint) {
  if (overwrite) return wanted;
  for (int n = 1;; ++n) {
    const std::string name = n == 1 ? wanted : cat(wanted, "-", n);
    if (has_checkpoint(name) || !finished(name)) return name;
  }
}

RunPaths run_paths(const Config& config, const World& world) {
  RunPaths p;
  world.decide_on_rank0([&] { p = decide(config, world.size()); });
  const std::string name = world.broadcast(p.name), checkpoint = world.broadcast(p.checkpoint);
  const std::string checkpoint_stem = paths::stem(checkpoint);
  RunPaths shared = paths_named(config, name, checkpoint_stem);
  shared.resumes = world.broadcast(p.resumes ? "1" : "") == "1";
  shared.renamed_from = world.broadcast(p.renamed_from);
  return shared;
}

void claim_run_outputs(const Config& config, const RunPaths& p, int world_size,
                       const std::vector<std::pair<std::string, std::string>>& given_inputs) {
  ensure_writable_directory(config.output.dir);
  auto inputs = given_inputs;
  add_inputs(inputs, "data.path", config.data.path);
  // The run's own name: free, its own resume, or output.overwrite (run_paths chose it so).
  claim_output({p.results, "results file", "output.overwrite: true", true, inputs});
  if (!p.model.empty()) claim_output({p.model, "model file", "output.overwrite: true", true, inputs});
  remove_stale_checkpoint_temporaries(p.checkpoint, config.train.keep_checkpoints);
  if (!config.distributed.timeline.empty())
    claim_configured("distributed.timeline", config.distributed.timeline, config, p.resumes, inputs);
  for (int rank = 0; rank < world_size && !config.profile.trace.empty(); ++rank)
    for (int cycle = 1; cycle <= config.profile.repeat; ++cycle)
      claim_configured("profile.trace", profile_trace_path(config.profile.trace, rank, cycle), config, p.resumes,
                       inputs);
  if (!p.renamed_from.empty())
    note(cat("'", p.renamed_from, "' is the name of an earlier run in ", config.output.dir, " (its files are kept): ",
             "this run is named '", p.name, "' and writes ", p.results,
             " (output.overwrite: true would replace the earlier run's files instead)"));
}

}  // namespace ft
