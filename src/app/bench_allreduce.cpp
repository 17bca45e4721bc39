// All-reduce benchmark implementation: medians over timed iterations after warm-up, each iteration
// starting from a barrier; rank 0 prints the table with the ratios b/c (fusion overhead against the
// ideal single buffer) and a/b (what fusion saves over per-tensor collectives).
#include "app/bench_allreduce.h"

#include <boost/program_options.hpp>

#include <algorithm>
#include <cstdio>
#include <functional>
#include <iostream>

#include "app/bench_common.h"
#include "app/command_line.h"
#include "app/error_text.h"
#include "comm/backend.h"
#include "engine/engine.h"
#include "comm/timeline.h"
#include "models/network.h"
#include "monitor/timer.h"
#include "runtime/error.h"
#include "runtime/world.h"
#include "train/device_setup.h"

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

}  // namespace

int bench_allreduce(int argc, char** argv) {
  auto options = bench_options("fusetrain bench allreduce (run under mpirun -np N)", "resnet18", 3);
  options.add_options()
      ("backend", po::value<std::string>()->default_value("mpi"), choice_list<BackendName>(" | ").c_str())
      ("bucket-mib", po::value<double>()->default_value(25), "fusion bucket size")
      ("first-bucket-mib", po::value<double>()->default_value(1), "first bucket size")
      ("iterations", po::value<int>()->default_value(20), "timed iterations")
      ("timeline", po::value<std::string>()->default_value(""), "Chrome-trace JSON of the fusion engine's phases");
  po::variables_map vm;
  if (const int status = bench_parse(options, argc, argv, vm, "fusetrain bench allreduce"); status >= 0) return status;

  World world(&argc, &argv);
  try {
    Config config = bench_config(vm);
    config.distributed.backend = choice_from<BackendName>("--backend", vm["backend"].as<std::string>());
    const at::Device device = place_rank(config, world);
    BackendOptions backend_options;
    backend_options.name = config.distributed.backend;
    backend_options.cuda_device = device.is_cuda() ? device.index() : -1;
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
    void* stream = nullptr;

    const double per_tensor = time_median(world, warmup, iterations, device, [&] {
      for (std::size_t i = grads.size(); i-- > 0;)
        backend->allreduce(grads[i].data_ptr(), static_cast<std::size_t>(grads[i].numel()), DType::kFloat32, stream);
    });

    GradientEngineOptions engine_options;
    engine_options.bucket_mib = vm["bucket-mib"].as<double>();
    engine_options.first_bucket_mib = vm["first-bucket-mib"].as<double>();
    engine_options.average = false;  // (a) and (c) sum too: compare like with like
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
    const double single = time_median(world, warmup, iterations, device, [&] {
      backend->allreduce(flat.data_ptr(), static_cast<std::size_t>(total), DType::kFloat32, stream);
    });

    if (world.rank() == 0) {
      const double mb = total * 4.0 / 1e6;
      std::printf("all-reduce of %s gradients: %zu tensors, %.1f MB fp32, %d ranks, backend %s, %zu buckets "
                  "(%.0f MiB, first %.0f MiB), median of %d\n\n",
                  choice_name(config.model.name), grads.size(), mb, world.size(), backend->name().c_str(),
                  engine.buckets().size(), engine_options.bucket_mib, engine_options.first_bucket_mib, iterations);
      std::printf("| variant | time_ms | algbw_GB_s |\n|---|---|---|\n");
      std::printf("| (a) one all-reduce per tensor | %.2f | %.2f |\n", per_tensor * 1e3, mb / 1e3 / per_tensor);
      std::printf("| (b) fusion engine | %.2f | %.2f |\n", fused * 1e3, mb / 1e3 / fused);
      std::printf("| (c) one contiguous buffer | %.2f | %.2f |\n\n", single * 1e3, mb / 1e3 / single);
      std::printf("b/c = %.3f (goal <= 1.15)   a/b = %.2f\n", fused / single, per_tensor / fused);
    }
  } catch (const std::exception& e) {
    if (world.size() > 1) world.abort(error_text(e));
    return report_error("fusetrain bench allreduce", e);
  }
  return 0;
}

}  // namespace ft
