// `fusetrain train`: parse and validate the config (before MPI starts), set up the world, backend and
// device, run the trainer, gather per-rank statistics and let rank 0 write the results file.
#include <boost/program_options.hpp>
#include <torch/version.h>

#include <chrono>
#include <cstdio>
#include <ctime>
#include <functional>
#include <iostream>
#include <memory>
#include <sstream>

#ifdef FUSETRAIN_WITH_CUDA
#include <cuda_runtime.h>
#endif

#include "app/command_line.h"
#include "app/error_text.h"
#include "app/commands.h"
#include "comm/backend.h"
#include "comm/timeline.h"
#include "config/loader.h"
#include "models/model_summary.h"
#include "monitor/gpu_sampler.h"
#include "results/detail_tables.h"
#include "results/rank_gather.h"
#include "results/table_render.h"
#include "results/results_file.h"
#include "results/straggler.h"
#include "runtime/error.h"
#include "runtime/error_report.h"
#include "runtime/host_name.h"
#include "runtime/launch_env.h"
#include "runtime/network_interface.h"
#include "runtime/collective_watch.h"
#include "runtime/signals.h"
#include "runtime/version.h"
#include "runtime/world.h"
#include "shard/shard_reader.h"
#include "checkpoint/checkpoint_files.h"
#include "device/cpu_capabilities.h"
#include "device/device_setup.h"
#include "checkpoint/finite_state.h"
#include "checkpoint/model_file.h"
#include "checkpoint/run_outputs.h"
#include "train/batch_norm_sync.h"
#include "train/trainer.h"

namespace po = boost::program_options;

namespace ft {
namespace {

std::string timestamp(const char* format) {
  const std::time_t now = std::time(nullptr);
  char text[64];
  std::strftime(text, sizeof(text), format, std::gmtime(&now));
  return text;
}

std::string mpi_version() {
  char text[MPI_MAX_LIBRARY_VERSION_STRING];
  int length = 0;
  MPI_Get_library_version(text, &length);
  std::string version(text, static_cast<std::size_t>(length));
  return version.substr(0, version.find_first_of(",\n"));
}

std::string cuda_version() {
#ifdef FUSETRAIN_WITH_CUDA
  int runtime = 0;
  if (cudaRuntimeGetVersion(&runtime) == cudaSuccess)
    return cat(runtime / 1000, ".", (runtime % 1000) / 10);
#endif
  return "none";
}

// Every rank must train the same config: ranks started from different files or --set options stop here.
void require_same_config(const World& world, const Config& config) {
  const auto dumps = world.allgather(dump_config(config));
  std::ostringstream differing;
  for (std::size_t r = 1; r < dumps.size(); ++r)
    if (dumps[r] != dumps[0]) differing << (differing.tellp() > 0 ? "," : "") << r;
  if (differing.tellp() > 0)
    throw SharedError(cat("the resolved config of rank(s) ", differing.str(),
                          " differs from rank 0's: every rank must read the same config file and --set options"));
}

// The model's layers for the results file, printed as a table: a CPU replica run on a zero image of the
// data's shape, so the run's own replica is untouched.
std::vector<ModelLayer> print_model_summary(const Config& config) {
  const ShardMeta meta = ShardReader(config.data.path, "train").meta();
  const InputShape shape{meta.channels, meta.height, meta.width, static_cast<int>(meta.class_names.size())};
  auto layers = model_summary(config.model, shape);
  std::printf("model %s:\n%s", choice_name(config.model.name), model_table(layers).c_str());
  std::fflush(stdout);
  return layers;
}

Provenance provenance(const std::string& command_line, const std::string& started, const Backend& backend,
                      const World& world) {
  Provenance p;
  p.program_version = program_version();
  p.git_commit = git_commit();
  p.torch_version = TORCH_VERSION;
  p.cuda_version = cuda_version();
  p.mpi_version = mpi_version();
  p.command_line = command_line;
  p.started_at = started;
  p.backend = backend.name();
  p.allreduce = choice_name(backend.allreduce_algorithm());
  p.world_size = world.size();
  p.node_count = world.node_count();
  return p;
}

// "2 epochs in 6.9 s (training 6.0 s)", or for a resumed run what this segment did beside the whole run's
// time: "2 epochs in 14.5 s over 2 segments; this one trained from epoch 2 (step 5) in 6.9 s (training 6.0 s)".
std::string done_text(const RunRecord& record) {
  const auto& s = record.summary;
  if (record.segments.size() <= 1)
    return cat(s.epochs_run, " epochs in ", fixed(s.wall_time_s, 1), " s (training ", fixed(s.train_time_s, 1), " s)");
  const SegmentRecord& last = record.segments.back();
  return cat(s.epochs_run, " epochs in ", fixed(s.wall_time_s, 1), " s over ", record.segments.size(),
             " segments; this one trained from epoch ", last.start_epoch,
             last.start_step > 0 ? cat(" (step ", last.start_step, ")") : std::string(), " in ",
             fixed(last.wall_time_s, 1), " s (training ", fixed(s.train_time_s, 1), " s)");
}

// With several ranks, the verdict on a straggler (results/straggler.h) from the summary's figures.
void print_straggler(const RunRecord& record, double threshold) {
  if (record.ranks.size() < 2) return;
  const auto& s = record.summary;
  StragglerVerdict verdict;
  verdict.rank = s.straggler_rank;
  verdict.slow_share = s.straggler_slow_share;
  verdict.excess = s.straggler_excess;
  verdict.wait_share = s.straggler_wait_share;
  std::vector<std::string> hosts;
  for (const auto& r : record.ranks) hosts.push_back(r.hostname);
  std::printf("%s\n", straggler_line(verdict, threshold, hosts).c_str());
}

void print_done(const RunRecord& record, const std::string& path) {
  const auto& s = record.summary;
  std::printf("done: %s, %.0f img/s, final test acc %.2f%%, best %.2f%% (epoch %d), peak memory %.1f MiB%s\n"
              "results: %s\n",
              done_text(record).c_str(), s.images_per_s, 100 * s.final_test_acc, 100 * s.best_test_acc,
              s.best_epoch, s.peak_memory_bytes / 1048576.0,
              s.overfit ? cat(", overfitting from epoch ", s.overfit_epoch).c_str() : "", path.c_str());
  if (!record.model_file.empty()) std::printf("model: %s\n", record.model_file.c_str());
  std::fflush(stdout);
}

// Gathers what every rank measured; rank 0 writes the trained network, then the results file naming it,
// and once both are safely written removes the run's checkpoints (files moved aside as damaged stay).
void write_run(const Config& config, const RunPaths& paths_of_run, Network& network, const TrainOutcome& outcome,
               const std::vector<UtilizationSample>& samples, const std::vector<ModelLayer>& layers,
               const Provenance& provenance, const World& world) {
  const auto ranks = gather_rank_records(world, outcome.rank);
  if (world.rank() != 0) return;
  RunRecord record;
  record.name = paths_of_run.name;
  record.model = choice_name(config.model.name);
  record.dataset = outcome.data.dataset;
  record.precision = choice_name(config.precision.dtype);
  record.batch_size = config.data.batch_size;
  record.config_yaml = dump_config(config);
  record.epochs = outcome.epochs;
  record.summary = outcome.summary;
  record.utilization = samples;
  record.ranks = ranks;
  record.rank_epochs = outcome.rank_epochs;
  record.segments = outcome.segments;
  record.layers = layers;
  for (const auto& rank : ranks)
    record.summary.peak_memory_bytes = std::max(record.summary.peak_memory_bytes, rank.peak_memory_bytes);
  record.provenance = provenance;
  if (!paths_of_run.model.empty()) {
    const std::string bad = first_non_finite(model_state(network));
    FT_REQUIRE(bad.empty(), "non-finite values in '", bad, "' at the end of training: model file ",
               paths_of_run.model, " and the results are not written; the run's checkpoints are kept");
    save_model_file(paths_of_run.model, network, model_info(config, outcome.data));
    record.model_file = paths_of_run.model;
  }
  write_results(paths_of_run.results, record);
  remove_checkpoints(paths_of_run.checkpoint);
  print_straggler(record, config.distributed.straggler_share);
  print_done(record, paths_of_run.results);
}

void print_banner(const Config& config, const World& world, const Backend& backend, const at::Device& device) {
  if (world.rank() != 0) return;
  std::printf("fusetrain %s: %s on %s, %d rank(s) on %d node(s), backend %s, device %s\n", program_version(),
              choice_name(config.model.name), config.data.path.c_str(), world.size(), world.node_count(),
              backend.name().c_str(), device.str().c_str());
  if (device.is_cpu() && config.precision.dtype == Precision::bf16)
    std::printf("bf16 autocast on the CPU; bf16 unit: %s\n", describe(host_cpu().bf16).c_str());
  std::fflush(stdout);
}

// What the train command line asks beyond the config.
struct TrainFlags {
  std::string command_line;
  std::string config_file;  // --config, an input no output may replace
  bool discard_damaged_checkpoints = false;
};

// The backends a run holds: the gradient engine's, and model.sync_batchnorm's communicator of its own.
struct RunBackends {
  std::unique_ptr<Backend> gradients, norms;
};

// One run on this rank: placement, outputs, backends, training, results. Throws on any error.
void run_training(const Config& config, const TrainFlags& flags, World& world, RunBackends& backends) {
  require_same_config(world, config);
  const at::Device device = place_rank(config, world);
  const std::string started = world.broadcast(timestamp("%Y-%m-%dT%H:%M:%SZ"));
  const RunPaths paths_of_run = run_paths(config, world);
  if (world.rank() == 0) claim_run_outputs(config, paths_of_run, world.size(), {{"--config", flags.config_file}});
  world.barrier();

  BackendOptions backend_options = run_backend_options(config, device);
  backends.gradients = make_backend(world, backend_options);
  Backend& backend = *backends.gradients;
  if (config.model.sync_batchnorm && world.size() > 1) {
    backend_options.allreduce = AllreduceAlgorithm::flat;  // a few kilobytes per layer: no hierarchy to gain from
    backends.norms = make_backend(world, backend_options);
  }
  const WatchedCollectives watched(world, backend.watch());
  Timeline timeline(!config.distributed.timeline.empty());
  print_banner(config, world, backend, device);
  const std::vector<ModelLayer> layers = world.rank() == 0 ? print_model_summary(config) : std::vector<ModelLayer>{};

  TrainerOptions trainer_options;
  trainer_options.checkpoint_path = paths_of_run.checkpoint;
  trainer_options.discard_damaged_checkpoints = flags.discard_damaged_checkpoints;
  trainer_options.timeline = &timeline;
  trainer_options.started_at = started;
  trainer_options.norm_backend = backends.norms.get();
  Trainer trainer(config, world, backend, device, trainer_options);
  GpuSampler sampler(device.is_cuda() ? device.index() : -1, world.rank());
  const TrainOutcome outcome = trainer.run();
  const auto samples = gather_utilization(world, sampler.stop());
  write_run(config, paths_of_run, *trainer.network(), outcome, samples, layers, provenance(flags.command_line, started, backend, world), world);
  if (!config.distributed.timeline.empty()) timeline.write(world, config.distributed.timeline);
  world.barrier();
}

// Before MPI starts, when Open MPI reads its settings: the network of every transport. A node without the
// named interface stops here (its first rank says why) and its ranks' exit makes the launcher end the job.
bool pin_network(const std::string& interface) {
  try {
    pin_mpi_transport(interface, launcher_one_node());
    return true;
  } catch (const Error& e) {
    if (launcher_local_rank() == 0) report_error("fusetrain", e, 1, "config error");
    return false;
  }
}

int train(const Config& config, const TrainFlags& flags, int argc, char** argv) {
  if (!pin_network(config.distributed.interface)) return 2;
  World world(&argc, &argv);
  report_world_formed(world.rank(), world.size());
  // A rank that dies or hangs must end the job, not leave the others waiting in a control collective.
  world.set_timeout(config.distributed.stall_timeout_s);
  install_stop_handlers();
  // Outside the try block: on an error the handler aborts the job at once, before unwinding could make
  // the backend wait out the grace period it gives abandoned collectives.
  RunBackends backends;
  try {
    run_training(config, flags, world, backends);
  } catch (const Interrupted& e) {
    // Every rank stopped at the same step; rank 0 wrote the checkpoint.
    if (world.rank() == 0) std::printf("%s\n", e.what()), std::fflush(stdout);
    return kExitResumable;
  } catch (const SharedError& e) {
    // Every rank stopped here on rank 0's verdict: one message, and no rank is left waiting.
    return world.rank() == 0 ? report_error("fusetrain", e) : 1;
  } catch (const StallError& e) {
    // A rank is gone: the survivors end with its name and a status that tells the job script to requeue.
    const std::string why = cat(error_text(e), " (exit ", kExitRankLost, ": a rank was lost; the job scripts requeue the run)");
    if (world.size() > 1) world.abort(why, kExitRankLost);
    print_failure("fusetrain", why, "error");
    return kExitRankLost;
  } catch (const std::exception& e) {
    if (world.size() > 1) world.abort(error_text(e));
    return report_error("fusetrain", e);
  }
  return 0;
}

}  // namespace

int train_command(int argc, char** argv) {
  po::options_description options("fusetrain train: train a network from a YAML config\n\n"
                                  "usage: [mpirun -np N] fusetrain train --config FILE [--set key=value ...]\n\n"
                                  "options");
  options.add_options()
      ("config,c", po::value<std::string>(), "YAML config file (see configs/ and --help-config)")
      ("set,s", po::value<std::vector<std::string>>()->composing(),
       "override one key, e.g. --set optimizer.lr=0.05 --set data.batch_size=64 (repeatable)")
      ("dry-run", "print the resolved config and exit")
      ("discard-damaged-checkpoints",
       "when every checkpoint of the run is damaged, move them aside (renamed to <name>.damaged) and start "
       "afresh instead of stopping with an error")
      ("help-config", "list every config key with its type, default and meaning")
      ("help,h", "show this help");
  po::variables_map vm;
  if (!parse_command_line(options, argc, argv, vm, "fusetrain train")) return 2;
  if (vm.count("help")) return std::cout << options, 0;
  if (vm.count("help-config")) return std::cout << config_reference(), 0;
  if (!vm.count("config")) {
    std::fprintf(stderr, "fusetrain train: --config is required\n\n");
    std::cerr << options;
    return 2;
  }
  TrainFlags flags;
  flags.command_line = "fusetrain";
  for (int i = 0; i < argc; ++i) flags.command_line += std::string(" ") + argv[i];
  flags.discard_damaged_checkpoints = vm.count("discard-damaged-checkpoints") > 0;
  flags.config_file = vm["config"].as<std::string>();

  Config config;
  try {
    const auto overrides = vm.count("set") ? vm["set"].as<std::vector<std::string>>() : std::vector<std::string>{};
    config = load_config(vm["config"].as<std::string>(), overrides);
    validate_for_device(config, cuda_available(), cuda_unavailable_reason());
  } catch (const Error& e) {
    // Every rank reads the same file and fails the same way: one message is enough.
    if (launcher_rank() == 0) report_error("fusetrain", e, 2, "config error");
    return 2;
  }
  if (vm.count("dry-run")) {
    // A job's preflight runs this once per node: a node lacking the named interface fails it, by name.
    try {
      require_interface(config.distributed.interface, host_name(), host_interfaces());
    } catch (const Error& e) {
      return report_error("fusetrain", e, 2, "config error");
    }
    if (launcher_rank() == 0) std::cout << dump_config(config);
    return 0;
  }
  return train(config, flags, argc, argv);
}

}  // namespace ft
