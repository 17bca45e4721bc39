// fusetrain's entry point: picks the subcommand and hands it the remaining arguments.
// Each subcommand lives in its own file (commands.h lists them).
#include <cstdio>
#include <cstring>
#include <string>

#include "app/commands.h"
#include "monitor/host_sync_guard.h"
#include "runtime/heap_policy.h"
#include "runtime/version.h"

int main(int argc, char** argv) {
  ft::keep_freed_memory();
  ft::install_host_sync_guard();  // the project's own blocking CUDA calls answer to the host-sync check too
  const std::string usage =
      "usage: fusetrain <command> [options]\n\n"
      "commands:\n"
      "  train    train a network from a YAML config (run under mpirun/srun for several ranks)\n"
      "  evaluate score a trained model or checkpoint on a split: accuracy, per-class table, confusion matrix\n"
      "  report   print a markdown/CSV table of results files (--confusion: an evaluation's matrix)\n"
      "  bench    benchmarks: allreduce, step, kernels, gray, batch-size\n"
      "  info     show build, devices and backends\n"
      "  inspect  show an HDF5 file (data shard or results) without hdf5-tools\n"
      "  sweep    expand a config's sweep: block into runs: SLURM job array, workstation plan, --run\n"
      "  export   write a trained network as safetensors or a torch.load-able file\n"
      "  predict  classify JPEG/PNG files with a trained model: top-K classes and probabilities as CSV\n"
      "  plan     predict step time and scaling on N nodes x G ranks from a profile and a link sweep\n\n"
      "`fusetrain <command> --help` describes each command's options.\n";
  if (argc < 2 || !std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "-h")) {
    std::fputs(usage.c_str(), argc < 2 ? stderr : stdout);
    return argc < 2 ? 2 : 0;
  }
  const std::string command = argv[1];
  if (command == "--version") {
    std::printf("fusetrain %s (%s)\n", ft::program_version(), ft::git_commit());
    return 0;
  }
  for (const auto& c : ft::commands())
    if (command == c.name) return ft::run_command(c, argc - 1, argv + 1);
  std::fprintf(stderr, "fusetrain: unknown command '%s'\n\n%s", command.c_str(), usage.c_str());
  return 2;
}
