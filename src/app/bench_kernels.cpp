// Kernel benchmark implementation. GPU rows are timed after warm-up with device synchronisation
// around each repetition (median reported); rows whose device is missing say so instead of a number.
#include "app/bench_kernels.h"

#include <ATen/ATen.h>
#include <ATen/Context.h>
#include <ATen/core/grad_mode.h>
#include <boost/program_options.hpp>

#include <cstdio>
#include <functional>
#include <vector>

#include "app/bench_common.h"
#include "app/error_text.h"
#include "models/fused_conv_relu.h"
#include "device/device_setup.h"

namespace po = boost::program_options;

namespace ft {
namespace {

struct ConvCase {
  at::Tensor x, w, b, grad;
};

ConvCase make_case(const po::variables_map& vm, const at::Device& device) {
  const int n = vm["batch"].as<int>(), c = vm["channels"].as<int>(), s = vm["size"].as<int>();
  const int o = vm["out-channels"].as<int>(), k = vm["kernel"].as<int>();
  const auto options = at::TensorOptions().device(device);
  ConvCase cc{at::randn({n, c, s, s}, options).requires_grad_(true), at::randn({o, c, k, k}, options).mul_(0.1).requires_grad_(true),
              at::randn({o}, options).requires_grad_(true), at::randn({n, o, s, s}, options)};
  return cc;
}

// Forward and forward+backward time of relu(conv(x)) by `conv_relu`.
std::pair<double, double> time_conv(const ConvCase& cc, int k, int warmup, int iterations, const at::Device& device,
                                    bool fused) {
  const std::vector<std::int64_t> stride = {1, 1}, padding = {k / 2, k / 2};
  auto forward = [&] {
    return fused ? fused_conv_relu(cc.x, cc.w, cc.b, stride, padding)
                 : at::relu(at::conv2d(cc.x, cc.w, cc.b, stride, padding));
  };
  const double f = median_ms(warmup, iterations, device, [&] {
    at::NoGradGuard no_grad;
    forward();
  });
  const double fb = median_ms(warmup, iterations, device, [&] {
    auto y = forward();
    y.backward(cc.grad);
  });
  return {f, fb - f};
}

}  // namespace

int bench_kernels(int argc, char** argv) {
  po::options_description options("fusetrain bench kernels: conv+ReLU, GPU against CPU (RGB->gray: bench gray)");
  options.add_options()
      ("batch", po::value<int>()->default_value(32), "images per batch")
      ("channels", po::value<int>()->default_value(32), "input channels")
      ("out-channels", po::value<int>()->default_value(64), "output channels")
      ("size", po::value<int>()->default_value(32), "image height and width")
      ("kernel", po::value<int>()->default_value(3), "convolution kernel size (stride 1, same padding)")
      ("iterations", po::value<int>()->default_value(20), "timed repetitions (median reported)")
      ("warmup", po::value<int>()->default_value(3), "untimed repetitions");
  po::variables_map vm;
  if (const int status = bench_parse(options, argc, argv, vm, "fusetrain bench kernels"); status >= 0) return status;
  try {
    const int warmup = vm["warmup"].as<int>(), iterations = vm["iterations"].as<int>(), k = vm["kernel"].as<int>();
    const bool gpu = cuda_available();
    std::printf("conv %dx%d, %d->%d channels, %dx%d images, batch %d, median of %d\n\n", k, k,
                vm["channels"].as<int>(), vm["out-channels"].as<int>(), vm["size"].as<int>(), vm["size"].as<int>(),
                vm["batch"].as<int>(), iterations);
    std::printf("| implementation | device | forward_ms | backward_ms |\n|---|---|---|---|\n");
    auto row = [](const char* name, const char* device, std::pair<double, double> t) {
      std::printf("| %s | %s | %.3f | %.3f |\n", name, device, t.first, t.second);
    };
    if (gpu) {
      const at::Device cuda(at::kCUDA, 0);
      const auto cc = make_case(vm, cuda);
      at::globalContext().setBenchmarkCuDNN(true);
      row("ATen conv2d + relu (cuDNN)", "cuda", time_conv(cc, k, warmup, iterations, cuda, false));
      at::globalContext().setUserEnabledCuDNN(false);
      row("ATen conv2d + relu (cuDNN disabled)", "cuda", time_conv(cc, k, warmup, iterations, cuda, false));
      at::globalContext().setUserEnabledCuDNN(true);
      row("fused conv+bias+ReLU kernel", "cuda", time_conv(cc, k, warmup, iterations, cuda, true));
    } else {
      std::printf("| cuDNN, cuDNN disabled, fused kernel | cuda | n/a: %s | n/a |\n", cuda_unavailable_reason().c_str());
    }
    const at::Device cpu(at::kCPU);
    const auto cc = make_case(vm, cpu);
    row("ATen conv2d + relu", "cpu", time_conv(cc, k, warmup, iterations, cpu, false));

  } catch (const std::exception& e) {
    return report_error("fusetrain bench kernels", e);
  }
  return 0;
}

}  // namespace ft
