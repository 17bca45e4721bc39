// `fusetrain bench gray`: RGB -> gray of N real images resized to SxS, as the coursework measured it: an
// interpreted per-pixel loop (tools/bench/gray_python_loop.py), a scalar C++ loop, the kernel's rule on
// the CPU and the CUDA kernel; every result is checked against the CPU rule, and four samples are
// written in colour and gray as PNG.
#include "app/bench_gray.h"

#include <ATen/ATen.h>
#include <boost/program_options.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <vector>

#include "app/bench_common.h"
#include "app/bench_gray_images.h"
#include "app/error_text.h"
#include "io/atomic_file.h"
#include "kernels/rgb_to_gray.h"
#include "runtime/error.h"

namespace po = boost::program_options;

namespace ft {
namespace {

// The scalar baseline: one pixel at a time by image, row and column, in floating point as a first
// implementation would write it (std::lround of 0.299 R + 0.587 G + 0.114 B).
void gray_scalar_loop(const std::uint8_t* rgb, std::uint8_t* gray, std::int64_t images, int size) {
  for (std::int64_t n = 0; n < images; ++n)
    for (int y = 0; y < size; ++y)
      for (int x = 0; x < size; ++x) {
        const std::int64_t i = (n * size + y) * size + x;
        const double v = 0.299 * rgb[3 * i] + 0.587 * rgb[3 * i + 1] + 0.114 * rgb[3 * i + 2];
        gray[i] = static_cast<std::uint8_t>(std::lround(v));
      }
}

// The interpreted baseline: which Python runs which script.
struct PythonLoop {
  std::string python, script;
};

// Seconds the Python loop takes; its output must equal `expect`.
double time_python_loop(const PythonLoop& loop, const std::string& dir, const std::vector<std::uint8_t>& rgb,
                        std::int64_t images, int size, const std::vector<std::uint8_t>& expect) {
  const std::string rgb_path = dir + "/images_rgb.u8", gray_path = dir + "/images_gray_python.u8";
  write_file_atomically(rgb_path, std::string(rgb.begin(), rgb.end()));
  const std::string command = cat("'", loop.python, "' '", loop.script, "' '", rgb_path, "' ", images, " ", size,
                                  " '", gray_path, "'");
  FILE* pipe = popen(command.c_str(), "r");
  FT_REQUIRE(pipe, "cannot run ", command);
  double seconds = -1;
  char line[256];
  while (std::fgets(line, sizeof(line), pipe)) std::sscanf(line, "seconds=%lf", &seconds);
  FT_REQUIRE(pclose(pipe) == 0 && seconds >= 0, "the Python loop failed: ", command);
  std::ifstream in(gray_path, std::ios::binary);
  const std::vector<std::uint8_t> gray((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  FT_REQUIRE(gray == expect, gray_path, ": the Python loop's gray images differ from the kernel rule's");
  return seconds;
}

void write_samples(const std::string& dir, const std::vector<std::uint8_t>& rgb, const std::vector<std::uint8_t>& gray,
                   std::int64_t images, int size) {
  const std::int64_t plane = std::int64_t{size} * size;
  for (std::int64_t k = 0; k < std::min<std::int64_t>(4, images); ++k) {
    write_png(cat(dir, "/sample_", k, "_color.png"), rgb.data() + 3 * k * plane, size, size, 3);
    write_png(cat(dir, "/sample_", k, "_gray.png"), gray.data() + k * plane, size, size, 1);
  }
}

void row(const char* name, double ms, double baseline_ms) {
  std::printf("| %s | %.3f | %.3gx |\n", name, ms, baseline_ms / ms);
}

// The CUDA rows: device-resident data, and host data with the copies in and out.
void time_cuda(const std::vector<std::uint8_t>& rgb, const std::vector<std::uint8_t>& expect, int warmup,
               int iterations, double baseline_ms) {
  const std::size_t pixels = expect.size();
  const at::Device cuda(at::kCUDA, 0);
  const auto d_rgb = at::from_blob(const_cast<std::uint8_t*>(rgb.data()), {static_cast<std::int64_t>(rgb.size())},
                                   at::kByte).to(cuda);
  auto d_gray = at::empty({static_cast<std::int64_t>(pixels)}, d_rgb.options());
  row("CUDA kernel (device-resident)", median_ms(warmup, iterations, cuda, [&] {
        rgb_to_gray_device(d_rgb.data_ptr<std::uint8_t>(), d_gray.data_ptr<std::uint8_t>(), pixels, nullptr);
      }), baseline_ms);
  const auto device_result = d_gray.cpu();
  FT_REQUIRE(std::equal(expect.begin(), expect.end(), device_result.data_ptr<std::uint8_t>()),
             "the CUDA kernel's gray images differ from the CPU rule's");
  std::vector<std::uint8_t> gray(pixels);
  row("CUDA kernel (with copies in and out)", median_ms(warmup, iterations, cuda, [&] {
        rgb_to_gray_staged(rgb.data(), gray.data(), pixels);
      }), baseline_ms);
  FT_REQUIRE(gray == expect, "the staged CUDA conversion differs from the CPU rule");
}

}  // namespace

int bench_gray(int argc, char** argv) {
  po::options_description options("fusetrain bench gray: RGB -> gray of real images (interpreted loop, C++, CUDA)");
  options.add_options()
      ("data", po::value<std::string>()->required(), "shard folder from fusetrain-prep (e.g. STL-10)")
      ("split", po::value<std::string>()->default_value("test"), "train | test")
      ("images", po::value<std::int64_t>()->default_value(200), "images to convert (the first N of the split)")
      ("size", po::value<int>()->default_value(128), "side the images are resized to")
      ("iterations", po::value<int>()->default_value(10), "timed repetitions of the compiled versions (median)")
      ("warmup", po::value<int>()->default_value(2), "untimed repetitions")
      ("python-loop", po::value<std::string>()->default_value(""),
       "tools/bench/gray_python_loop.py to time the interpreted baseline (empty: skip it)")
      ("python", po::value<std::string>()->default_value("python3"),
       "the Python that runs --python-loop (it needs torch)")
      ("out", po::value<std::string>()->default_value("gray_samples"), "folder for the sample PNGs");
  po::variables_map vm;
  if (const int status = bench_parse(options, argc, argv, vm, "fusetrain bench gray"); status >= 0) return status;
  try {
    const int size = vm["size"].as<int>(), warmup = vm["warmup"].as<int>(), iterations = vm["iterations"].as<int>();
    FT_REQUIRE(size > 0 && vm["images"].as<std::int64_t>() > 0 && iterations > 0, "--images, --size and --iterations "
               "must be positive");
    const std::string out = vm["out"].as<std::string>();
    ensure_writable_directory(out);
    std::int64_t images = 0;
    const auto rgb = load_rgb_images(vm["data"].as<std::string>(), vm["split"].as<std::string>(),
                                     vm["images"].as<std::int64_t>(), size, &images);
    const std::size_t pixels = rgb.size() / 3;
    std::vector<std::uint8_t> expect(pixels), gray(pixels);
    rgb_to_gray_cpu(rgb.data(), expect.data(), pixels);
    const at::Device cpu(at::kCPU);

    std::printf("RGB->gray of %lld images at %dx%d (%.1f MB in), median of %d\n\n", static_cast<long long>(images),
                size, size, rgb.size() / 1e6, iterations);
    std::printf("| implementation | time_ms | speed-up over the scalar loop |\n|---|---|---|\n");
    const double scalar = median_ms(warmup, iterations, cpu, [&] { gray_scalar_loop(rgb.data(), gray.data(), images, size); });
    const PythonLoop loop{vm["python"].as<std::string>(), vm["python-loop"].as<std::string>()};
    if (!loop.script.empty())
      row("Python loop (interpreted, once)", 1e3 * time_python_loop(loop, out, rgb, images, size, expect), scalar);
    row("scalar C++ loop (floating point)", scalar, scalar);
    row("kernel rule on the CPU", median_ms(warmup, iterations, cpu, [&] {
          rgb_to_gray_cpu(rgb.data(), gray.data(), pixels);
        }), scalar);
    if (cuda_kernels_available())
      time_cuda(rgb, expect, warmup, iterations, scalar);
    else
      std::printf("| CUDA kernel | n/a: %s | n/a |\n", cuda_kernels_built() ? "no CUDA device" : "built without CUDA");
    write_samples(out, rgb, expect, images, size);
    std::printf("\nsamples: %s/sample_{0..%lld}_{color,gray}.png\n", out.c_str(),
                static_cast<long long>(std::min<std::int64_t>(4, images) - 1));
  } catch (const std::exception& e) {
    return report_error("fusetrain bench gray", e);
  }
  return 0;
}

}  // namespace ft
