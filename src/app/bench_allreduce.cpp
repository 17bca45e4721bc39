// All-reduce benchmark implementation: medians over timed iterations after warm-up, each iteration
// starting from a barrier; rank 0 prints the table (times, algorithm, bus bandwidth) with the ratios b/c
// (fusion overhead against the ideal single buffer), a/b (what fusion saves) and b against the link bound.
#include "app/bench_allreduce.h"

#include <boost/program_options.hpp>

#include <algorithm>
#include <cstdio>
#include <functional>
#include <iostream>

#include "app/bench_common.h"
#include "app/bench_sweep.h"
#include "app/command_line.h"
#include "app/error_text.h"
#include "comm/backend.h"
#include "engine/engine.h"
#include "engine/engine_autotune.h"
#include "engine/engine_device.h"
#include "comm/timeline.h"
#include "models/network.h"
#include "monitor/timer.h"
#include "runtime/collective_timing.h"
#include "runtime/error.h"
#include "runtime/world.h"
#include "device/device_setup.h"

namespace po = boost::program_options;

namespace ft {
namespace {

double time_median(const World& world, int warmup, int iterations, const at::Device& device,
                   const std::function<void()>& body) {
  std::vector<double> times;
  for (int i = 0; i < warmup + iterations; ++i) {
    world.barrier();
    Stopwatch clock;
    body();
    synchronize(device);
    double t = clock.seconds();
    t = world.allreduce_max(t);
    if (i >= warmup) times.push_back(t);
  }
  return median(times);
}

struct Times {
  double per_tensor, fused, single;
};

struct Setting {
  std::size_t tensors = 0;
  std::int64_t elements = 0;
  int iterations = 0;
  double link_gbit = 0;  // --link-gbit: the bandwidth of one node's link, 0 = not given
  MpiAlgorithm mpi_algorithm = MpiAlgorithm::automatic;  // --mpi-algorithm (mpi backend only)
};

// Algorithm bandwidth is bytes / time; bus bandwidth scales it by 2(n-1)/n, the share of the buffer
// that each rank sends (and receives) in a bandwidth-optimal all-reduce, so that it compares directly
// with the bandwidth of one link, whatever the number of ranks. Across N nodes joined by links of B
// bit/s no all-reduce beats 2(N-1)/N x bytes / B: each node must send that much over its link.
void print_table(const Config& config, const Backend& backend, const World& world, const GradientEngine& engine,
                 const GradientEngineOptions& options, const Setting& s, const Times& t) {
  const double mb = s.elements * 4.0 / 1e6;
  const int ranks = world.size(), nodes = world.node_count();
  const double bus = ranks > 1 ? 2.0 * (ranks - 1) / ranks : 0.0;
  const std::string mpi = backend.name() == "mpi" ? cat(", ", choice_name(s.mpi_algorithm)) : "";
  std::printf("all-reduce of %s gradients: %zu tensors, %.1f MB fp32, %d ranks on %d node(s), backend %s (%s%s), "
              "%zu buckets (%g MiB, first %g MiB, last at most %g MiB), median of %d\n\n",
              choice_name(config.model.name), s.tensors, mb, ranks, nodes, backend.name().c_str(),
              choice_name(backend.allreduce_algorithm()), mpi.c_str(), engine.buckets().size(), options.bucket_mib,
              options.first_bucket_mib, options.last_bucket_mib, s.iterations);
  std::printf("| variant | time_ms | algbw_GB_s | busbw_GB_s |\n|---|---|---|---|\n");
  const auto row = [&](const char* variant, double seconds) {
    std::printf("| %s | %.2f | %.2f | %.2f |\n", variant, seconds * 1e3, mb / 1e3 / seconds, bus * mb / 1e3 / seconds);
  };
  row("(a) one all-reduce per tensor", t.per_tensor);
  row("(b) fusion engine", t.fused);
  row("(c) one contiguous buffer", t.single);
  std::printf("\nb/c = %.3f (goal <= 1.15)   a/b = %.2f\n", t.fused / t.single, t.per_tensor / t.fused);
  if (s.link_gbit > 0 && nodes > 1) {
    const double bound = 2.0 * (nodes - 1) / nodes * mb * 8e6 / (s.link_gbit * 1e9);
    std::printf("link bound (%g Gbit/s, %d nodes) = %.2f ms   b/bound = %.2f\n", s.link_gbit, nodes, bound * 1e3,
                t.fused / bound);
  }
}

// --sweep: the flat all-reduce of one buffer per size and the fit of the level it crosses.
int link_sweep(const po::variables_map& vm, const World& world, BackendOptions options, const at::Device& device) {
  FT_REQUIRE(options.allreduce != AllreduceAlgorithm::hierarchical, "--sweep measures one level of the network with "
             "the flat all-reduce: leave --allreduce at auto or flat");
  options.allreduce = AllreduceAlgorithm::flat;
  SweepSetting setting;
  setting.sizes = sweep_sizes(vm["sweep"].as<std::string>());
  setting.warmup = vm["warmup"].as<int>();
  setting.iterations = vm["iterations"].as<int>();
  setting.level = vm["level"].as<std::string>();
  setting.fit_path = vm["fit"].as<std::string>();
  setting.backend = options.name;
  setting.mpi_algorithm = options.mpi_algorithm;
  setting.beside_compute = vm["beside-compute"].as<int>();
  FT_REQUIRE(setting.beside_compute >= 0, "--beside-compute must be 0 or more busy threads per rank, not ",
             setting.beside_compute);
  run_link_sweep(world, options, device, setting);
  return 0;
}

}  // namespace

int bench_allreduce(int argc, char** argv) {
  auto options = bench_options("fusetrain bench allreduce (run under mpirun -np N)", "resnet18", 3);
  options.add_options()
      ("backend", po::value<std::string>()->default_value("auto"), bench_backend_help().c_str())
      ("allreduce", po::value<std::string>()->default_value("auto"), choice_list<AllreduceAlgorithm>(" | ").c_str())
      ("mpi-algorithm", po::value<std::string>()->default_value("auto"),
       (choice_list<MpiAlgorithm>(" | ") + " (as distributed.mpi_algorithm)").c_str())
      ("bucket-mib", po::value<double>()->default_value(DistributedConfig{}.bucket_mib), "fusion bucket size")
      ("first-bucket-mib", po::value<double>()->default_value(DistributedConfig{}.first_bucket_mib), "first bucket size")
      ("last-bucket-mib", po::value<double>()->default_value(DistributedConfig{}.last_bucket_mib),
       "most of the last bucket")
      ("autotune", "choose the bucket sizes by timing candidates first (as distributed.autotune)")
      ("iterations", po::value<int>()->default_value(20), "timed iterations")
      ("link-gbit", po::value<double>()->default_value(0), "bandwidth of one node's link: print the bound")
      ("timeline", po::value<std::string>()->default_value(""), "Chrome-trace JSON of the fusion engine's phases")
      ("sweep", po::value<std::string>()->implicit_value("default"),
       "instead of the model's gradients, one buffer at each size (default: 4 KiB to 16 MiB; or bytes,bytes,...), "
       "flat, fitted as latency alpha and inverse bandwidth beta (fusetrain plan)")
      ("level", po::value<std::string>()->default_value("auto"),
       "--sweep: intra (ranks of one node) | inter (ranks on several nodes) | auto")
      ("fit", po::value<std::string>()->default_value(""), "--sweep: the link file to write the level into")
      ("beside-compute", po::value<int>()->default_value(0),
       "--sweep: time beside this many busy threads per rank, as a step's all-reduces run beside backward on "
       "cores the ranks fill (fusetrain plan --one-machine --link-beside-compute); write it to its own link file");
  po::variables_map vm;
  if (const int status = bench_parse(options, argc, argv, vm, "fusetrain bench allreduce"); status >= 0) return status;

  World world(&argc, &argv);
  try {
    Config config = bench_config(vm);
    config.distributed.backend = bench_backend(vm, config);
    const at::Device device = place_rank(config, world);
    BackendOptions backend_options;
    backend_options.name = config.distributed.backend;
    backend_options.allreduce = choice_from<AllreduceAlgorithm>("--allreduce", vm["allreduce"].as<std::string>());
    backend_options.mpi_algorithm =
        choice_from<MpiAlgorithm>("--mpi-algorithm", vm["mpi-algorithm"].as<std::string>());
    backend_options.cuda_device = device.is_cuda() ? device.index() : -1;
    if (vm.count("sweep")) return link_sweep(vm, world, backend_options, device);
    auto backend = make_backend(world, backend_options);

    at::manual_seed(0);
    auto net = make_network(config.model, InputShape{3, 32, 32, 10});
    net->to(device);
    std::vector<NamedTensor> named;
    std::vector<at::Tensor> grads;
    std::int64_t total = 0;
    for (const auto& item : net->named_parameters()) {
      if (!item.value().requires_grad()) continue;  // frozen parameters get no gradient
      named.push_back({item.key(), item.value()});
      grads.push_back(at::randn_like(item.value()));
      total += item.value().numel();
    }
    const int warmup = vm["warmup"].as<int>(), iterations = vm["iterations"].as<int>();
    // (a) and (c) hand whole tensors over as the engine hands a bucket: device pointers to a backend that
    // takes them (NCCL), staged through pinned host memory for MPI and Gloo when the model is on a GPU.
    const auto sync = make_bucket_device_sync(device.is_cuda(), 1);
    const auto reduce = [&](at::Tensor& t) {
      sync->mark_packed(0);
      sync->run(0, [&] { sync->allreduce(*backend, t, DType::kFloat32); });
      sync->wait_all(1);
    };
    const double per_tensor = time_median(world, warmup, iterations, device, [&] {
      for (std::size_t i = grads.size(); i-- > 0;) reduce(grads[i]);
    });

    GradientEngineOptions engine_options;
    engine_options.bucket_mib = vm["bucket-mib"].as<double>();
    engine_options.first_bucket_mib = vm["first-bucket-mib"].as<double>();
    engine_options.last_bucket_mib = vm["last-bucket-mib"].as<double>();
    engine_options.average = false;  // (a) and (c) sum too: compare like with like
    engine_options.reduce_alone = true;  // measured as several ranks run it, even on one
    if (vm.count("autotune")) apply_autotuned_buckets(*backend, world, named, engine_options);
    Timeline timeline(!vm["timeline"].as<std::string>().empty());
    engine_options.timeline = &timeline;
    GradientEngine engine(*backend, world, named, engine_options, /*install_hooks=*/false);
    const double fused = time_median(world, warmup, iterations, device, [&] {
      engine.prepare(true);
      for (std::size_t i = grads.size(); i-- > 0;) engine.submit(i, grads[i]);
      engine.finish();
    });

    if (timeline.enabled()) timeline.write(world, vm["timeline"].as<std::string>());

    auto flat = at::randn({total}, at::TensorOptions().device(device));
    const double single = time_median(world, warmup, iterations, device, [&] { reduce(flat); });

    const Setting setting{grads.size(), total, iterations, vm["link-gbit"].as<double>(),
                          backend_options.mpi_algorithm};
    if (world.rank() == 0)
      print_table(config, *backend, world, engine, engine_options, setting, {per_tensor, fused, single});
  } catch (const std::exception& e) {
    if (world.size() > 1) world.abort(error_text(e));
    return report_error("fusetrain bench allreduce", e);
  }
  return 0;
}

}  // namespace ft
