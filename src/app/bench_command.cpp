// `fusetrain bench`: picks one of the benchmarks (allreduce, step, kernels, batch-size), each in its own
// file; `fusetrain bench` alone lists them with what each measures.
#include <boost/program_options.hpp>

#include <algorithm>
#include <cstdio>
#include <iostream>

#include "app/bench_allreduce.h"
#include "app/bench_batch_size.h"
#include "app/bench_gray.h"
#include "app/bench_kernels.h"
#include "app/bench_step.h"
#include "app/commands.h"

namespace po = boost::program_options;

namespace ft {

int bench_command(int argc, char** argv) {
  const std::string usage =
      "fusetrain bench: benchmarks\n\n"
      "  fusetrain bench allreduce --model resnet18 --backend mpi|gloo|nccl [--allreduce flat|hierarchical]\n"
      "      [--autotune] [--link-gbit 10]   (under mpirun -np N)\n"
      "  fusetrain bench step --model simple_cnn --ranks 1,2 [--batch 128]\n"
      "  fusetrain bench kernels   (conv+ReLU: cuDNN, cuDNN disabled, fused kernel, CPU)\n"
      "  fusetrain bench gray --data DIR [--images 200 --size 128]   (RGB->gray: Python loop, C++, CUDA; PNGs)\n"
      "  fusetrain bench batch-size --model resnet18   (throughput, memory, GPU use; largest batch that fits)\n\n"
      "`fusetrain bench <name> --help` lists each benchmark's options.\n";
  if (argc < 2) {
    std::fputs(usage.c_str(), stderr);
    return 2;
  }
  const std::string which = argv[1];
  if (which == "--help" || which == "-h") return std::fputs(usage.c_str(), stdout), 0;
  if (which == "allreduce") return bench_allreduce(argc - 1, argv + 1);
  if (which == "step") return bench_step(argc - 1, argv + 1);
  if (which == "kernels") return bench_kernels(argc - 1, argv + 1);
  if (which == "gray") return bench_gray(argc - 1, argv + 1);
  if (which == "batch-size") return bench_batch_size(argc - 1, argv + 1);
  if (which == "step-worker") return bench_step_worker(argc - 1, argv + 1);
  std::fprintf(stderr, "fusetrain bench: unknown benchmark '%s'\n\n%s", which.c_str(), usage.c_str());
  return 2;
}

}  // namespace ft
