// The profiled run: synthetic device-resident batches, the real model and optimizer, no all-reduce. Hooks after
// gradient accumulation time each parameter's gradient from the start of backward; a bucket (the engine's own
// plan) is ready when its last gradient is. Ranks started together (mpirun -np P on one machine) meet before
// every step and keep, step by step, the slowest rank's times, as a step that ends in an all-reduce waits for it;
// they meet sleeping, not polling, so that a rank done early leaves its core to the ranks still computing, as a
// training rank waiting for its all-reduce does (ranks that never met drift apart where they share cores).
#include "app/plan_profile.h"

#include <ATen/Parallel.h>
#include <boost/program_options.hpp>
#include <torch/csrc/autograd/function_hook.h>
#include <torch/csrc/autograd/variable.h>

#include <algorithm>
#include <cstdio>

#include "app/bench_common.h"
#include "app/command_line.h"
#include "app/error_text.h"
#include "comm/bucket_plan.h"
#include "device/device_setup.h"
#include "io/atomic_file.h"
#include "io/paths.h"
#include "models/network.h"
#include "monitor/memory.h"
#include "monitor/timer.h"
#include "optim/optimizer.h"
#include "plan/plan_files.h"
#include "runtime/collective_timing.h"
#include "runtime/error.h"
#include "runtime/world.h"

namespace po = boost::program_options;

namespace ft {
namespace {

// Seconds since backward began when a parameter's gradient was accumulated (on a GPU, once the device got there).
class GradientClock final : public torch::autograd::PostAccumulateGradHook {
 public:
  GradientClock(const Stopwatch& backward, const at::Device& device, double& at)
      : backward_(backward), device_(device), at_(at) {}
  void operator()(const torch::autograd::Variable&) override {
    if (device_.is_cuda()) synchronize(device_);
    at_ = backward_.seconds();
  }

 private:
  const Stopwatch& backward_;
  at::Device device_;
  double& at_;
};

struct ProfiledModel {
  std::shared_ptr<Network> net;
  std::vector<at::Tensor> parameters;
  std::vector<BucketSpec> buckets;
  std::vector<TensorSpec> specs;
  std::unique_ptr<torch::optim::Optimizer> optimizer;
};

ProfiledModel profiled_model(const Config& config, const InputShape& shape, const at::Device& device,
                             const po::variables_map& vm) {
  ProfiledModel m;
  at::manual_seed(0);
  m.net = make_network(config.model, shape);
  m.net->to(device);
  for (const auto& item : m.net->named_parameters()) {
    if (!item.value().requires_grad()) continue;  // frozen: no gradient, no bucket
    m.parameters.push_back(item.value());
    m.specs.push_back({item.key(), DType::kFloat32, item.value().sizes().vec()});
  }
  const auto mib = [&](const char* key) { return static_cast<std::size_t>(vm[key].as<double>() * 1024 * 1024); };
  m.buckets = plan_buckets(m.specs, mib("first-bucket-mib"), mib("bucket-mib"), mib("last-bucket-mib"));
  OptimizerConfig sgd;
  sgd.momentum = 0.9;
  m.optimizer = make_optimizer(sgd, m.parameters);
  return m;
}

// One step's times from its start: forward's end, each bucket's readiness, backward's end, then the optimizer's
// own time.
std::vector<double> profile_step(ProfiledModel& m, const at::Tensor& x, const at::Tensor& y,
                                 const at::Device& device, std::vector<double>& ready_at, Stopwatch& backward) {
  for (auto& p : m.parameters) p.mutable_grad() = at::Tensor();
  Stopwatch step;
  const at::Tensor loss = at::cross_entropy_loss(m.net->forward(x), y);
  synchronize(device);
  const double forward = step.seconds();
  std::fill(ready_at.begin(), ready_at.end(), 0.0);
  backward.reset();
  loss.backward();
  synchronize(device);
  const double backward_end = step.seconds();
  Stopwatch optimizer;
  m.optimizer->step();
  synchronize(device);
  std::vector<double> times{forward};
  for (const BucketSpec& b : m.buckets) {
    double ready = 0;
    for (const std::size_t t : b.tensors) ready = std::max(ready, ready_at[t]);
    times.push_back(forward + ready);
  }
  times.push_back(backward_end);
  times.push_back(optimizer.seconds());
  return times;
}

// Every rank's steps, each time the slowest rank's in that step. Collective.
std::vector<std::vector<double>> slowest_of_ranks(const World& world, const std::vector<std::vector<double>>& steps) {
  std::string mine;
  for (const auto& s : steps) mine.append(reinterpret_cast<const char*>(s.data()), s.size() * sizeof(double));
  std::vector<std::vector<double>> slowest = steps;
  for (const std::string& theirs : world.allgather(mine)) {
    FT_CHECK(theirs.size() == mine.size(), "ranks profiled different numbers of steps or buckets");
    const double* value = reinterpret_cast<const double*>(theirs.data());
    for (auto& s : slowest)
      for (double& t : s) t = std::max(t, *value++);
  }
  return slowest;
}

// The medians over steps of each time, as a profile (bucket times relative to backward's start).
StepProfile summarise(const std::vector<std::vector<double>>& steps, const ProfiledModel& m) {
  std::vector<double> med(steps.front().size());
  for (std::size_t k = 0; k < med.size(); ++k) {
    std::vector<double> column;
    for (const auto& s : steps) column.push_back(s[k]);
    med[k] = median(column);
  }
  StepProfile p;
  p.forward_s = med.front();
  p.backward_s = std::max(1e-9, med[med.size() - 2] - p.forward_s);
  p.optimizer_s = med.back();
  for (std::size_t b = 0; b < m.buckets.size(); ++b) {
    ProfileBucket bucket{m.buckets[b].numel, std::clamp(med[1 + b] - p.forward_s, 0.0, p.backward_s), {}};
    for (const std::size_t t : m.buckets[b].tensors) bucket.shapes.push_back(m.specs[t].shape);
    p.buckets.push_back(bucket);
  }
  return p;
}

po::options_description profile_options() {
  auto options = bench_options("fusetrain plan profile [under mpirun -np P: P ranks computing at once]",
                               "simple_cnn", 2);
  const DistributedConfig d;
  options.add_options()
      ("out", po::value<std::string>(), "the profile file to write (JSON; fusetrain plan --profile)")
      ("batch", po::value<int>()->default_value(32), "images per rank per step")
      ("steps", po::value<int>()->default_value(10), "timed steps (the profile keeps their medians)")
      ("image", po::value<std::string>()->default_value("3x32x32"), "CxHxW of the synthetic images")
      ("classes", po::value<int>()->default_value(10), "classes of the model's output")
      ("threads", po::value<int>()->default_value(0), "CPU threads per rank (0 = as training chooses)")
      ("bucket-mib", po::value<double>()->default_value(d.bucket_mib), "fusion bucket size (distributed.bucket_mib)")
      ("first-bucket-mib", po::value<double>()->default_value(d.first_bucket_mib), "first bucket size")
      ("last-bucket-mib", po::value<double>()->default_value(d.last_bucket_mib), "most of the last bucket");
  return options;
}

// `threads`: each rank's intra-op threads, on which a CPU profile's compute depends as much as on the ranks.
void print_profile(const StepProfile& p, int threads, const std::string& path) {
  std::printf("profile of %s on %s, batch %d, %d rank(s) computing at once, %d thread(s) each, median of %d steps: "
              "forward %.2f ms, backward %.2f ms, optimizer %.2f ms\nbuckets ready after backward began (ms):",
              p.model.c_str(), p.device.c_str(), p.batch, p.ranks, threads, p.steps, p.forward_s * 1e3,
              p.backward_s * 1e3, p.optimizer_s * 1e3);
  for (const auto& b : p.buckets) std::printf(" %.2f", b.ready_s * 1e3);
  std::printf("\nprofile: %s\n", path.c_str());
  std::fflush(stdout);
}

}  // namespace

int plan_profile(int argc, char** argv) {
  po::variables_map vm;
  if (const int status = bench_parse(profile_options(), argc, argv, vm, "fusetrain plan profile"); status >= 0)
    return status;
  World world(&argc, &argv);
  try {
    FT_REQUIRE(vm.count("out"), "--out is required: the profile file to write");
    const int batch = vm["batch"].as<int>(), steps = vm["steps"].as<int>(), warmup = vm["warmup"].as<int>();
    FT_REQUIRE(batch > 0 && steps > 0 && warmup >= 0, "--batch and --steps must be positive, --warmup not negative");
    const std::string out = vm["out"].as<std::string>();
    if (world.rank() == 0) ensure_writable_directory(paths::parent(out).empty() ? "." : paths::parent(out));
    Config config = bench_config(vm);
    config.train.threads = vm["threads"].as<int>();
    const at::Device device = place_rank(config, world);
    InputShape shape = parse_image_shape(vm["image"].as<std::string>());
    shape.classes = vm["classes"].as<int>();
    ProfiledModel m = profiled_model(config, shape, device, vm);
    std::vector<double> ready_at(m.parameters.size());
    Stopwatch backward;  // reset as each step's backward begins
    for (std::size_t i = 0; i < m.parameters.size(); ++i)
      torch::autograd::impl::set_post_acc_grad_hooks(m.parameters[i],
                                                     std::make_unique<GradientClock>(backward, device, ready_at[i]));
    const auto opts = at::TensorOptions().device(device);
    const at::Tensor x = at::randn({batch, shape.channels, shape.height, shape.width}, opts);
    const at::Tensor y = at::randint(0, shape.classes, {batch}, opts.dtype(at::kLong));
    std::vector<std::vector<double>> timed;
    for (int i = 0; i < warmup + steps; ++i) {
      world.barrier_sleeping();
      auto times = profile_step(m, x, y, device, ready_at, backward);
      if (i >= warmup) timed.push_back(std::move(times));
    }
    timed = slowest_of_ranks(world, timed);
    for (auto& p : m.parameters) torch::autograd::impl::post_acc_grad_hooks(p).reset();
    StepProfile p = summarise(timed, m);
    p.model = choice_name(config.model.name);
    p.device = device_name(device);
    p.source = "fusetrain plan profile";
    p.batch = batch, p.ranks = world.size(), p.steps = steps;
    if (world.rank() == 0) {
      write_file_atomically(out, profile_json(p));
      print_profile(p, at::get_num_threads(), out);
    }
  } catch (const std::exception& e) {
    if (world.size() > 1) world.abort(error_text(e));
    return report_error("fusetrain plan profile", e);
  }
  return 0;
}

}  // namespace ft
