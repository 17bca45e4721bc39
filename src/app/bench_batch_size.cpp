// Batch-size study: for batch = start, 2*start, ... each size trains a few timed steps on synthetic
// device-resident data with a fresh model and optimizer; an out-of-memory error ends the sweep and
// the previous size is reported as the largest that fits.
#include "app/bench_batch_size.h"

#include <boost/program_options.hpp>
#include <c10/util/Exception.h>

#include <cstdio>

#include "app/bench_common.h"
#include "app/command_line.h"
#include "app/error_text.h"
#include "models/network.h"
#include "monitor/gpu_sampler.h"
#include "monitor/memory.h"
#include "monitor/timer.h"
#include "device/device_setup.h"
#include "optim/optimizer.h"
#include "runtime/world.h"

namespace po = boost::program_options;

namespace ft {
namespace {

struct Point {
  double images_per_s = 0, mean_gpu_percent = -1;
  std::int64_t peak_bytes = 0;
};

Point measure(const Config& config, const InputShape& shape, int batch, int warmup, int steps,
              const at::Device& device) {
  reset_peak_memory(device);
  at::manual_seed(0);
  auto net = make_network(config.model, shape);
  net->to(device);
  std::vector<at::Tensor> parameters = net->parameters();
  auto optimizer = make_optimizer(config.optimizer, parameters);
  const auto options = at::TensorOptions().device(device);
  const auto x = at::randn({batch, shape.channels, shape.height, shape.width}, options);
  const auto y = at::randint(0, shape.classes, {batch}, options.dtype(at::kLong));
  auto step = [&] {
    for (auto& p : parameters) p.mutable_grad() = at::Tensor();
    at::cross_entropy_loss(net->forward(x), y).backward();
    optimizer->step();
  };
  for (int i = 0; i < warmup; ++i) step();
  synchronize(device);
  GpuSampler sampler(device.is_cuda() ? device.index() : -1, 0, 20.0);
  Stopwatch clock;
  for (int i = 0; i < steps; ++i) step();
  synchronize(device);
  Point p;
  p.images_per_s = double(batch) * steps / clock.seconds();
  p.peak_bytes = peak_memory_bytes(device);
  const auto samples = sampler.stop();
  if (!samples.empty()) {
    double sum = 0;
    for (const auto& s : samples) sum += s.gpu_percent;
    p.mean_gpu_percent = sum / static_cast<double>(samples.size());
  }
  return p;
}

}  // namespace

int bench_batch_size(int argc, char** argv) {
  auto options = bench_options("fusetrain bench batch-size: throughput, memory and GPU utilisation per batch size",
                               "simple_cnn", 3);
  options.add_options()
      ("image", po::value<std::string>()->default_value("3x32x32"), "CxHxW of the synthetic images")
      ("start", po::value<int>()->default_value(16), "first batch size (doubled each point)")
      ("max-batch", po::value<int>()->default_value(0), "largest batch to try (0: 65536 on GPU, 1024 on CPU)")
      ("steps", po::value<int>()->default_value(20), "timed steps per batch size");
  po::variables_map vm;
  if (const int status = bench_parse(options, argc, argv, vm, "fusetrain bench batch-size"); status >= 0)
    return status;
  World world(&argc, &argv);
  try {
    Config config = bench_config(vm);
    config.optimizer.momentum = 0.9;
    const at::Device device = place_rank(config, world);
    const InputShape shape = parse_image_shape(vm["image"].as<std::string>());
    int ceiling = vm["max-batch"].as<int>();
    if (ceiling == 0) ceiling = device.is_cuda() ? 65536 : 1024;
    std::printf("%s on %s, %s images\n\n| batch | images_per_s | peak_MiB | gpu_util_%% |\n|---|---|---|---|\n",
                choice_name(config.model.name), device_name(device).c_str(), vm["image"].as<std::string>().c_str());
    int largest = 0;
    for (int batch = vm["start"].as<int>(); batch <= ceiling; batch *= 2) {
      Point p;
      try {
        p = measure(config, shape, batch, vm["warmup"].as<int>(), vm["steps"].as<int>(), device);
      } catch (const c10::OutOfMemoryError&) {
        std::printf("| %d | out of memory | | |\n", batch);
        break;
      }
      largest = batch;
      std::printf("| %d | %.1f | %.1f | %s |\n", batch, p.images_per_s, p.peak_bytes / 1048576.0,
                  p.mean_gpu_percent < 0 ? "n/a" : cat(p.mean_gpu_percent).c_str());
      std::fflush(stdout);
    }
    std::printf("\nlargest batch that fits: %d%s\n", largest, largest * 2 > ceiling ? " (ceiling reached)" : "");
  } catch (const std::exception& e) {
    return report_error("fusetrain bench batch-size", e);
  }
  return 0;
}

}  // namespace ft
