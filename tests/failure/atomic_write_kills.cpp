// Kills a process that is writing a results file or a checkpoint at random moments, many times, and checks
// after every kill that the target path holds an old or a new complete file, never a broken or mixed one.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <thread>

#include "io/paths.h"
#include "config/schema.h"
#include "models/network.h"
#include "results/results_file.h"
#include "runtime/error.h"
#include "checkpoint/checkpoint.h"
#include "optim/optimizer.h"
#include "optim/precision.h"

namespace {

using Clock = std::chrono::steady_clock;
constexpr const char* kFingerprint = "atomic-write-kills";

// A results record whose every number is `generation`, so a file mixing two writes is detectable.
ft::RunRecord results_record(int generation) {
  ft::RunRecord r;
  r.name = "generation-" + std::to_string(generation);
  r.model = "simple_cnn";
  r.dataset = "fashion-mnist";
  r.precision = "fp32";
  r.batch_size = generation;
  r.config_yaml = std::string(20000, 'x');
  r.provenance.world_size = 4;
  for (int e = 1; e <= 2000; ++e) {
    ft::EpochRecord row;
    row.epoch = e;
    row.train_loss = row.test_loss = row.lr = generation;
    r.epochs.push_back(row);
  }
  r.ranks.resize(4);
  for (auto& rank : r.ranks) rank.hostname = r.name, rank.allreduce_s = generation;
  r.summary.epochs_run = generation;
  return r;
}

// Returns the generation a results file holds after checking it is complete and consistent.
int check_results(const std::string& path) {
  const ft::RunRecord r = ft::read_results(path);
  const int g = r.batch_size;
  FT_REQUIRE(r.name == "generation-" + std::to_string(g), path, ": name ", r.name, " but batch_size ", g);
  FT_REQUIRE(r.epochs.size() == 2000 && r.ranks.size() == 4 && r.summary.epochs_run == g &&
                 r.config_yaml.size() == 20000,
             path, ": generation ", g, " is incomplete");
  for (const auto& e : r.epochs)
    FT_REQUIRE(e.train_loss == g && e.test_loss == g && e.lr == g, path, ": epoch ", e.epoch, " mixes generations");
  for (const auto& rank : r.ranks) FT_REQUIRE(rank.allreduce_s == g, path, ": a rank row mixes generations");
  return g;
}

struct Model {
  std::shared_ptr<ft::Network> net;
  std::unique_ptr<torch::optim::Optimizer> optimizer;
  std::unique_ptr<ft::LossScaler> scaler;
};

Model make_model() {
  ft::ModelConfig model;
  model.name = ft::ModelName::resnet9;
  model.width = 32;
  ft::OptimizerConfig sgd;
  sgd.momentum = 0.9;
  Model m;
  m.net = ft::make_network(model, {3, 32, 32, 10});
  m.optimizer = ft::make_optimizer(sgd, m.net->parameters());
  m.scaler = std::make_unique<ft::LossScaler>(false, 1.0, 1, at::kCPU);
  return m;
}

// Writes checkpoints whose parameters, momentum and position all equal the generation number.
void write_checkpoint(Model& m, const std::string& path, int generation) {
  at::NoGradGuard no_grad;
  for (auto& p : m.net->parameters()) p.mutable_grad() = at::full_like(p, generation);
  m.optimizer->step();  // momentum buffers now depend on the generation too
  for (auto& p : m.net->parameters()) p.fill_(generation);
  ft::TrainingPosition position;
  position.epoch = generation;
  position.global_step = generation;
  ft::save_checkpoint(path, kFingerprint, *m.net, *m.optimizer, *m.scaler, position, at::kCPU);
}

int check_checkpoint(const std::string& path) {
  Model m = make_model();
  const ft::TrainingPosition p = ft::load_checkpoint(path, kFingerprint, *m.net, *m.optimizer, *m.scaler, at::kCPU);
  for (const auto& t : m.net->parameters())
    FT_REQUIRE(at::all(t.eq(p.epoch)).item<bool>(), path, ": parameters do not match position epoch ", p.epoch);
  FT_REQUIRE(p.global_step == p.epoch, path, ": position fields disagree");
  return p.epoch;
}

// The child: tells the parent it is ready on fd `ready`, then writes generations first, first+1, ... forever.
[[noreturn]] void writer(const std::string& kind, const std::string& path, int first, int ready) {
  Model m;
  if (kind == "checkpoint") m = make_model();
  const char byte = 1;
  if (::write(ready, &byte, 1) != 1) std::_Exit(3);
  for (int g = first;; ++g) {
    if (kind == "results")
      ft::write_results(path, results_record(g));
    else
      write_checkpoint(m, path, g);
  }
}

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

int run(const std::string& kind, const std::string& dir, int iterations) {
  ft::paths::create_directories(dir);
  const std::string path = dir + "/" + (kind == "results" ? "run.h5" : "run.ckpt");
  ft::paths::remove(path);
  auto check = [&](const std::string& p) { return kind == "results" ? check_results(p) : check_checkpoint(p); };

  // Calibrate: how long one complete write takes here, so kills land before, inside and after writes.
  const auto start = Clock::now();
  if (kind == "results") {
    ft::write_results(path, results_record(1));
  } else {
    Model m = make_model();
    write_checkpoint(m, path, 1);
  }
  const double one_write_s = seconds_since(start);
  FT_REQUIRE(check(path) == 1, "calibration write is unreadable");
  std::printf("%s: one write takes %.3f s; %d kills follow\n", kind.c_str(), one_write_s, iterations);

  std::mt19937 random(12345);
  int last = 1, completed_kills = 0;
  for (int i = 0; i < iterations; ++i) {
    int pipe_fds[2];
    FT_REQUIRE(::pipe(pipe_fds) == 0, "pipe failed");
    const pid_t child = ::fork();
    FT_REQUIRE(child >= 0, "fork failed");
    if (child == 0) {
      ::close(pipe_fds[0]);
      const std::string first = std::to_string(last + 1), fd = std::to_string(pipe_fds[1]);
      ::execl("/proc/self/exe", "atomic_write_kills", "--writer", kind.c_str(), path.c_str(), first.c_str(), fd.c_str(),
              static_cast<char*>(nullptr));
      std::_Exit(127);
    }
    ::close(pipe_fds[1]);
    char byte = 0;
    FT_REQUIRE(::read(pipe_fds[0], &byte, 1) == 1, "writer did not start");
    ::close(pipe_fds[0]);
    const double delay = std::uniform_real_distribution<double>(0.0, 2.5 * one_write_s)(random);
    std::this_thread::sleep_for(std::chrono::duration<double>(delay));
    ::kill(child, SIGKILL);
    int status = 0;
    ::waitpid(child, &status, 0);
    FT_REQUIRE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL, "writer ended by itself (status ", status, ")");

    FT_REQUIRE(ft::paths::exists(path), "kill ", i, ": ", path, " vanished (the old complete file must stay)");
    int now = 0;
    try {
      now = check(path);
    } catch (const std::exception& e) {
      throw ft::Error(ft::cat("kill ", i, " after ", delay, " s: ", path, " is broken: ", e.what()));
    }
    FT_REQUIRE(now >= last, "kill ", i, ": generation went back from ", last, " to ", now);
    completed_kills += now > last;
    last = now;
  }
  std::printf("%s: %d kills, target always complete; %d kills found a newer generation (last %d)\n", kind.c_str(),
              iterations, completed_kills, last);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    if (argc == 6 && std::string(argv[1]) == "--writer") writer(argv[2], argv[3], std::atoi(argv[4]), std::atoi(argv[5]));
    if (argc != 4 || (std::string(argv[1]) != "results" && std::string(argv[1]) != "checkpoint")) {
      std::fputs("usage: atomic_write_kills results|checkpoint DIR ITERATIONS\n", stderr);
      return 2;
    }
    return run(argv[1], argv[2], std::atoi(argv[3]));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "FAIL: %s\n", e.what());
    return 1;
  }
}
