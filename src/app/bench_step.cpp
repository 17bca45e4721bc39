// Step benchmark: synthetic device-resident batches, the real model, the gradient engine and SGD (fused where
// training fuses it; --cuda-graphs replays the step), so the figure is the framework's own step rate.
// Scaling efficiency = images/s at N ranks / (N x images/s at 1).
#include "app/bench_common.h"
#include "app/command_line.h"
#include "app/error_text.h"
#include "app/bench_step.h"

#include <unistd.h>

#include <boost/program_options.hpp>

#include <algorithm>
#include <cstdio>
#include <functional>
#include <sstream>
#include <thread>

#include "comm/backend.h"
#include "engine/engine.h"
#include "engine/powersgd.h"
#include "models/channels_last.h"
#include "models/network.h"
#include "monitor/timer.h"
#include "runtime/error.h"
#include "runtime/world.h"
#include "device/device_setup.h"
#include "optim/fused_step.h"
#include "device/graphed_step.h"
#include "optim/optimizer.h"
#include "optim/precision.h"
#include "device/visible_devices.h"

namespace po = boost::program_options;

namespace ft {
namespace {

po::options_description step_options() {
  auto options = bench_options("fusetrain bench step", "simple_cnn", 5);
  options.add_options()
      ("ranks", po::value<std::string>(),
       "world sizes to measure, comma separated (default: 1,2 on the CPU; on GPUs 1, and 2 where 2 are visible)")
      ("allow-device-sharing", "let more ranks than visible GPUs share them (backend mpi or gloo)")
      ("batch", po::value<int>()->default_value(128), "images per rank per step")
      ("steps", po::value<int>()->default_value(30), "timed steps")
      ("backend", po::value<std::string>()->default_value("auto"), bench_backend_help().c_str())
      ("mpi-algorithm", po::value<std::string>()->default_value("auto"),
       (choice_list<MpiAlgorithm>(" | ") + " (as distributed.mpi_algorithm)").c_str())
      ("image", po::value<std::string>()->default_value("3x32x32"), "CxHxW of the synthetic images")
      ("precision", po::value<std::string>()->default_value("fp32"),
       (choice_list<Precision>(" | ") + " (fp16/bf16: autocast as precision.dtype, bf16 on CPU too; no loss scaling)").c_str())
      ("channels-last", "channels-last images and conv weights (as precision.channels_last)")
      ("cuda-graphs", "replay each step from a CUDA graph (as train.cuda_graphs; GPUs, NCCL on several ranks)")
      ("bucket-mib", po::value<double>(), "one fusion bucket size in MiB for every bucket (first and last too); "
       "default: distributed.bucket_mib's defaults")
      ("powersgd-rank", po::value<int>()->default_value(0),
       "compress every step with PowerSGD at this rank (as distributed.compression powersgd with "
       "powersgd_start_step 0); 0 = the plain all-reduce")
      ("threads", po::value<int>()->default_value(0),
       "CPU threads per rank (0 = cores / largest world size, the same for every world size)");
  return options;
}

std::string self_path() {
  char path[4096];
  const ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 1);
  FT_REQUIRE(n > 0, "cannot locate the fusetrain executable (/proc/self/exe)");
  return std::string(path, static_cast<std::size_t>(n));
}

// The world sizes to measure: --ranks, or by default those that fit this host's devices (1,2 on the CPU;
// on GPUs 1, and 2 where 2 devices are visible). More ranks than GPUs need --allow-device-sharing.
std::vector<int> step_ranks(const po::variables_map& vm) {
  const bool share = vm.count("allow-device-sharing") > 0;
  FT_REQUIRE(!(share && vm["backend"].as<std::string>() == "nccl"), "--allow-device-sharing cannot be used with "
             "--backend nccl: NCCL cannot run two ranks on one GPU; use --backend mpi or gloo to share GPUs");
  bench_backend(vm, bench_config(vm));  // refused here, before mpirun, when the device cannot use it
  const DeviceChoice choice = choice_from<DeviceChoice>("--device", vm["device"].as<std::string>());
  const int gpus = visible_devices().count();
  const bool gpu = cuda_wanted(choice, cuda_kernels_built(), gpus > 0);
  std::vector<int> ranks;
  std::stringstream list(vm.count("ranks") ? vm["ranks"].as<std::string>() : gpu && gpus < 2 ? "1" : "1,2");
  for (std::string item; std::getline(list, item, ',');) ranks.push_back(std::stoi(item));
  FT_REQUIRE(!ranks.empty(), "--ranks is empty");
  const int largest = *std::max_element(ranks.begin(), ranks.end());
  FT_REQUIRE(!gpu || share || largest <= gpus, "--ranks ", largest, " puts ", largest, " ranks on the ", gpus,
             " GPU(s) this host shows: measure at most ", gpus, " rank(s), or pass --allow-device-sharing "
             "(backend mpi or gloo) to share GPUs between ranks");
  return ranks;
}

// The precision and memory format the steps run in (--precision, --channels-last).
struct StepFormat {
  at::ScalarType param_dtype = at::kFloat, amp_dtype = at::kFloat;
  bool channels_last = false;
};

StepFormat step_format(const po::variables_map& vm, const at::Device& device) {
  const Precision precision = choice_from<Precision>("--precision", vm["precision"].as<std::string>());
  FT_REQUIRE(device.is_cuda() || precision != Precision::fp16,
             "--precision fp16 needs a CUDA device; use bf16 (CPU autocast) or fp32 on CPU");
  const at::ScalarType dtype = training_dtype(precision);
  StepFormat format;
  format.param_dtype = dtype == at::kDouble ? at::kDouble : at::kFloat;
  format.amp_dtype = (dtype == at::kHalf || dtype == at::kBFloat16) ? dtype : at::kFloat;
  format.channels_last = vm.count("channels-last") > 0;
  return format;
}

// The model on `device` in `format`, seeded the same on every rank.
std::shared_ptr<Network> step_network(const Config& config, const InputShape& shape, const at::Device& device,
                                      const StepFormat& format) {
  at::manual_seed(0);
  auto net = make_network(config.model, shape);
  net->to(device, format.param_dtype);
  if (format.channels_last) use_channels_last(*net);
  return net;
}

// Per step, the mean over ranks: the communication thread's time in all-reduces, and the part of it the
// main thread waited for in finish() (exposed); the rest ran behind backward.
struct StepComm {
  double allreduce_ms = 0, exposed_ms = 0, wire_mb = 0;  // wire_mb: MB every rank all-reduced per step
  double hidden() const { return EngineStats{exposed_ms, allreduce_ms}.hidden_fraction(); }
};

StepComm step_comm(const World& world, const EngineStats& before, const EngineStats& after, int steps) {
  double sums[3] = {after.allreduce_s - before.allreduce_s, after.wait_s - before.wait_s,
                    static_cast<double>(after.bytes - before.bytes)};
  world.allreduce_sum(sums, 3);
  const double scale = 1e3 / (world.size() * std::max(1, steps));
  return {sums[0] * scale, sums[1] * scale, sums[2] * scale * 1e-9};  // bytes x 1e3 x 1e-9: MB
}

// What a benchmark step is made of: the model, its fixed batch, the optimizer (fused where training would
// fuse it) and, eager, the gradient engine.
struct BenchStepParts {
  std::shared_ptr<Network> net;
  at::Tensor x, y;
  StepFormat format;
  at::Device device = at::kCPU;
  std::unique_ptr<torch::optim::Optimizer> optimizer;
  std::unique_ptr<FusedStep> fused;
  std::unique_ptr<GradientEngine> engine;
};

at::Tensor step_loss(BenchStepParts& p, const at::Tensor& x, const at::Tensor& y, int world_size) {
  AutocastScope autocast(p.device, p.format.amp_dtype);
  return at::cross_entropy_loss(p.net->forward(x).to(p.format.param_dtype), y) * (1.0 / world_size);
}

void optimizer_step(BenchStepParts& p) {
  if (p.fused)
    p.fused->step();
  else
    p.optimizer->step();
}

// Eager: the engine all-reduces during backward, then the optimizer steps.
std::function<void()> eager_step(BenchStepParts& p, int world_size) {
  return [&p, world_size] {
    p.engine->clear_gradients();
    p.engine->prepare(true);
    step_loss(p, p.x, p.y, world_size).backward();
    p.engine->finish();
    optimizer_step(p);
  };
}

// --cuda-graphs, as training does it: after warm-up one graph holds forward, backward and (one rank) the
// optimizer; several ranks all-reduce the one gradient buffer over NCCL after the replay, then step.
std::function<void()> graphed_step(BenchStepParts& p, Backend& backend, const World& world,
                                   const std::vector<at::Tensor>& parameters, int warmup) {
  FT_REQUIRE(p.device.is_cuda(), "--cuda-graphs needs a CUDA device (--device ", p.device, ")");
  FT_REQUIRE(warmup > GraphedStep::kWarmupSteps, "--cuda-graphs captures the step after ", GraphedStep::kWarmupSteps,
             " eager ones: --warmup must be at least ", GraphedStep::kWarmupSteps + 1, " so that only replays are timed");
  FT_REQUIRE(p.fused, "--cuda-graphs needs the fused optimizer step");
  FT_REQUIRE(world.size() == 1 || backend.uses_device_memory(), "--cuda-graphs on ", world.size(),
             " ranks needs --backend nccl");
  const GradientBuffer gradients(parameters, p.device);
  const int world_size = world.size();
  auto graphed = std::make_shared<GraphedStep>([&p, gradients, world_size](const StepBuffers& b) {
    gradients.zero();
    step_loss(p, b.x, b.y, world_size).backward();
    if (world_size == 1) optimizer_step(p);
  });
  return [&p, &backend, graphed, gradients, world_size] {
    graphed->run(p.x, p.y);
    if (world_size == 1) return;
    gradients.allreduce(backend);
    optimizer_step(p);
  };
}

}  // namespace

int bench_step_worker(int argc, char** argv) {
  po::variables_map vm;
  if (const int status = bench_parse(step_options(), argc, argv, vm, "fusetrain bench step"); status >= 0)
    return status;
  World world(&argc, &argv);
  try {
    Config config = bench_config(vm);
    config.train.threads = vm["threads"].as<int>();
    config.distributed.backend = bench_backend(vm, config);
    config.distributed.allow_device_sharing = vm.count("allow-device-sharing") > 0;
    const at::Device device = place_rank(config, world);
    BackendOptions backend_options;
    backend_options.name = config.distributed.backend;
    backend_options.mpi_algorithm =
        choice_from<MpiAlgorithm>("--mpi-algorithm", vm["mpi-algorithm"].as<std::string>());
    backend_options.cuda_device = device.is_cuda() ? device.index() : -1;
    auto backend = make_backend(world, backend_options);

    const InputShape shape = parse_image_shape(vm["image"].as<std::string>());
    BenchStepParts parts;
    parts.device = device;
    parts.format = step_format(vm, device);
    parts.net = step_network(config, shape, device, parts.format);
    std::vector<NamedTensor> named;
    std::vector<at::Tensor> parameters;
    for (const auto& item : parts.net->named_parameters()) {
      if (!item.value().requires_grad()) continue;  // frozen parameters get no gradient
      named.push_back({item.key(), item.value()});
      parameters.push_back(item.value());
    }
    config.optimizer.momentum = 0.9;
    parts.optimizer = make_optimizer(config.optimizer, parameters);
    parts.fused = FusedStep::make(*parts.optimizer, config.optimizer, device);
    const int batch = vm["batch"].as<int>();
    const auto options_device = at::TensorOptions().device(device);
    parts.x = at::randn({batch, shape.channels, shape.height, shape.width},
                        options_device.dtype(parts.format.param_dtype));
    if (parts.format.channels_last) parts.x = parts.x.contiguous(at::MemoryFormat::ChannelsLast);
    parts.y = at::randint(0, shape.classes, {batch}, options_device.dtype(at::kLong));
    std::function<void()> step;
    if (vm.count("cuda-graphs")) {
      step = graphed_step(parts, *backend, world, parameters, vm["warmup"].as<int>());
    } else {
      GradientEngineOptions engine_options;
      engine_options.average = false;  // the loss is divided by the world size instead
      if (vm.count("bucket-mib"))
        engine_options.bucket_mib = engine_options.first_bucket_mib = engine_options.last_bucket_mib =
            vm["bucket-mib"].as<double>();
      if (const int rank = vm["powersgd-rank"].as<int>(); rank > 0)
        engine_options.reducer = std::make_shared<PowerSgd>(named, world.size(), PowerSgdOptions{rank, 0, 0});
      parts.engine = std::make_unique<GradientEngine>(*backend, world, named, engine_options);
      step = eager_step(parts, world.size());
    }
    const auto stats = [&parts] { return parts.engine ? parts.engine->stats() : EngineStats{}; };
    for (int i = 0; i < vm["warmup"].as<int>(); ++i) step();
    synchronize(device);
    world.barrier();
    const int steps = vm["steps"].as<int>();
    const EngineStats before = stats();
    Stopwatch clock;
    for (int i = 0; i < steps; ++i) step();
    synchronize(device);
    double seconds = clock.seconds();
    seconds = world.allreduce_max(seconds);
    const StepComm comm = step_comm(world, before, stats(), steps);
    if (world.rank() == 0)
      std::printf("images_per_s=%.3f ranks=%d seconds=%.4f allreduce_ms=%.2f exposed_ms=%.2f hidden=%.3f "
                  "wire_mb=%.4f\n",
                  double(batch) * steps * world.size() / seconds, world.size(), seconds, comm.allreduce_ms,
                  comm.exposed_ms, comm.hidden(), comm.wire_mb);
  } catch (const std::exception& e) {
    if (world.size() > 1) world.abort(error_text(e));
    return report_error("fusetrain bench step-worker", e);
  }
  return 0;
}

int bench_step(int argc, char** argv) {
  po::variables_map vm;
  if (const int status = bench_parse(step_options(), argc, argv, vm, "fusetrain bench step"); status >= 0)
    return status;
  try {
    const std::vector<int> ranks = step_ranks(vm);
    choice_from<Precision>("--precision", vm["precision"].as<std::string>());  // refused here, before mpirun
    const char* mpirun = std::getenv("FUSETRAIN_MPIRUN");
    std::string forward;
    for (int i = 1; i < argc; ++i) {
      const std::string arg = argv[i];
      if (arg.rfind("--ranks", 0) == 0 || arg.rfind("--threads", 0) == 0) {
        if (arg == "--ranks" || arg == "--threads") ++i;
        continue;
      }
      forward += " '" + arg + "'";
    }
    // A rank stands for one device: give every world size the same threads per rank, so that
    // efficiency measures the cost of distribution rather than of thread scaling inside one process.
    const int largest = *std::max_element(ranks.begin(), ranks.end());
    int threads = vm["threads"].as<int>();
    if (threads == 0) threads = std::max(1, static_cast<int>(std::thread::hardware_concurrency()) / largest);
    forward += cat(" --threads ", threads);
    const int powersgd = vm["powersgd-rank"].as<int>();
    FT_REQUIRE(powersgd >= 0, "--powersgd-rank must be 0 (off) or a rank of at least 1, not ", powersgd);
    std::printf("threads per rank: %d, precision %s%s%s%s\n\n", threads, vm["precision"].as<std::string>().c_str(),
                vm.count("channels-last") ? ", channels-last" : "", vm.count("cuda-graphs") ? ", CUDA graphs" : "",
                powersgd > 0 ? cat(", PowerSGD rank ", powersgd).c_str() : "");
    std::printf("| ranks | images_per_s | per_rank | scaling_efficiency | allreduce_ms/step | exposed_ms/step | "
                "hidden | wire_MB/step |\n|---|---|---|---|---|---|---|---|\n");
    double base = 0;
    for (int n : ranks) {
      const std::string command = cat(mpirun ? mpirun : "mpirun", " -np ", n,
                                      " --oversubscribe --bind-to none", getuid() == 0 ? " --allow-run-as-root" : "",
                                      " '", self_path(), "' bench step-worker", forward);
      FILE* pipe = popen(command.c_str(), "r");
      FT_REQUIRE(pipe, "cannot run ", command);
      double ips = -1, allreduce_ms = 0, exposed_ms = 0, hidden = 0, wire_mb = 0;
      char line[512];
      while (std::fgets(line, sizeof(line), pipe))
        std::sscanf(line, "images_per_s=%lf ranks=%*d seconds=%*f allreduce_ms=%lf exposed_ms=%lf hidden=%lf wire_mb=%lf",
                    &ips, &allreduce_ms, &exposed_ms, &hidden, &wire_mb);
      const int status = pclose(pipe);
      FT_REQUIRE(status == 0 && ips > 0, "benchmark at ", n, " rank(s) failed: ", command);
      if (base == 0) base = ips / n;
      std::printf("| %d | %.1f | %.1f | %.1f%% | %.1f | %.1f | %.0f%% | %.3f |\n", n, ips, ips / n,
                  100.0 * ips / (n * base), allreduce_ms, exposed_ms, 100 * hidden, wire_mb);
      std::fflush(stdout);
    }
  } catch (const std::exception& e) {
    return report_error("fusetrain bench step", e);
  }
  return 0;
}

}  // namespace ft
