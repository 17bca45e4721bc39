// Implementation of the benchmarks' shared options and timing, so that every benchmark spells its
// common flags, help and medians the same way.
#include "app/bench_common.h"

#include <ATen/Device.h>

#include <iostream>
#include <vector>

#include "app/command_line.h"
#include "config/choices.h"
#include "monitor/timer.h"
#include "runtime/collective_timing.h"
#include "runtime/error.h"
#include "kernels/device_query.h"
#include "device/device_setup.h"

namespace po = boost::program_options;

namespace ft {

po::options_description bench_options(const std::string& title, const std::string& model, int warmup) {
  po::options_description options(title);
  options.add_options()
      ("model", po::value<std::string>()->default_value(model), choice_list<ModelName>(" | ").c_str())
      ("device", po::value<std::string>()->default_value("auto"), choice_list<DeviceChoice>(" | ").c_str())
      ("warmup", po::value<int>()->default_value(warmup), "untimed repetitions before the timed ones");
  return options;
}

int bench_parse(po::options_description options, int argc, char** argv, po::variables_map& vm, const char* command) {
  options.add_options()("help,h", "show this help");
  if (!parse_command_line(options, argc, argv, vm, command)) return 2;
  if (vm.count("help")) return std::cout << options, 0;
  return -1;
}

Config bench_config(const po::variables_map& vm) {
  Config config;
  config.model.name = choice_from<ModelName>("--model", vm["model"].as<std::string>());
  config.train.device = choice_from<DeviceChoice>("--device", vm["device"].as<std::string>());
  return config;
}

std::string bench_backend_help() {
  return "auto (nccl on CUDA devices, else mpi) | " + choice_list<BackendName>(" | ");
}

BackendName bench_backend(const po::variables_map& vm, const Config& config) {
  const std::string given = vm["backend"].as<std::string>();
  const bool cuda = cuda_wanted(config.train.device, cuda_kernels_built(), cuda_available());
  if (given == "auto") return cuda ? BackendName::nccl : BackendName::mpi;
  const BackendName backend = choice_from<BackendName>("--backend", given);
  FT_REQUIRE(backend != BackendName::nccl || cuda, "--backend nccl needs CUDA devices (--device ",
             choice_name(config.train.device), ": ", cuda ? "" : cuda_unavailable_reason(),
             "); use --backend mpi or gloo on the CPU");
  return backend;
}

double median_ms(int warmup, int iterations, const at::Device& device, const std::function<void()>& body) {
  std::vector<double> times;
  for (int i = 0; i < warmup + iterations; ++i) {
    synchronize(device);
    Stopwatch clock;
    body();
    synchronize(device);
    if (i >= warmup) times.push_back(clock.seconds() * 1e3);
  }
  return median(times);
}

}  // namespace ft
