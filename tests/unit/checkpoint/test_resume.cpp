// Tests of checkpoint/resume.cpp on one rank: the time since the last save restarts at each save (the clock of
// train.checkpoint_every_s), and a rank's own state (PowerSGD's error feedback) comes back from the file intact.
#include "checkpoint/resume.h"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "io/paths.h"
#include "optim/optimizer.h"
#include "test_paths.h"
#include "test_world.h"
#include "tiny_network.h"

namespace ft {
namespace {

// A small network and its optimizer, and the state a Resume captures of them with `rank_state` as this rank's own.
struct Trained {
  std::shared_ptr<Network> net;
  std::unique_ptr<torch::optim::Optimizer> optimizer;
  LossScaler scaler{false, 1.0, 1, at::Device(at::kCPU)};

  Trained() {
    at::manual_seed(0);
    net = test::tiny_network();
    std::vector<at::Tensor> parameters = net->parameters();
    optimizer = make_optimizer(OptimizerConfig{}, parameters);
  }
  CheckpointedState state(std::vector<at::Tensor> rank_state) {
    return {*net, *optimizer, scaler, at::Device(at::kCPU), {}, 7, {}, std::move(rank_state)};
  }
};

// The newest checkpoint's name in a folder of its own, emptied (rotated files included).
std::string checkpoint_path(const std::string& name) {
  const std::string dir = test::temp_dir() + "/resume-" + name;
  paths::remove_all(dir);
  paths::create_directories(dir);
  return dir + "/run.ckpt";
}

TEST(Resume, TheTimeSinceTheLastSaveRestartsAtEachSave) {
  Trained t;
  Resume resume(checkpoint_path("clock"), "fingerprint", test::world(), t.state({}), CheckpointPolicy{}, {});
  resume.start();
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  const auto before_save = std::chrono::steady_clock::now();
  resume.save(TrainingPosition{});
  // Read in this order, a clock restarted inside save() cannot show more than the time since before_save; one
  // still counting from start() shows the 20 ms slept more.
  const double since_save = resume.seconds_since_save();
  const double since_before = std::chrono::duration<double>(std::chrono::steady_clock::now() - before_save).count();
  EXPECT_LE(since_save, since_before);
}

TEST(Resume, ARanksOwnStateComesBackFromTheFile) {
  const std::string path = checkpoint_path("rank_state");
  Trained saving;
  const at::Tensor feedback = at::arange(6, at::kFloat).reshape({2, 3}).add_(0.5);
  Resume(path, "fingerprint", test::world(), saving.state({feedback}), CheckpointPolicy{}, {}).save(TrainingPosition{});

  Trained resumed;
  at::Tensor restored = at::zeros({2, 3});
  Resume(path, "fingerprint", test::world(), resumed.state({restored}), CheckpointPolicy{}, ResumeSource{path, {}})
      .start();
  EXPECT_TRUE(at::equal(restored, feedback)) << restored;
}

}  // namespace
}  // namespace ft
