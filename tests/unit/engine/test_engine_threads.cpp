// One thread owns a backend's transfers in flight: with a stand-in device backend (every all-reduce left in
// flight, as NCCL's are), only the engine's communication thread polls, waits for and gives up on them,
// during training steps and bucket autotuning alike, and a stalled transfer is given up once.
#include <gtest/gtest.h>
#include <torch/nn/modules/linear.h>

#include <atomic>
#include <cstring>
#include <mutex>
#include <set>
#include <thread>

#include "comm/backend.h"
#include "engine/engine.h"
#include "engine/engine_autotune.h"
#include "test_world.h"

namespace ft {
namespace {

// A backend whose all-reduces complete "on the device" later: in flight until polled `delay` times. It
// records every thread that touches that state; `stall_after` polls make it fail as a stalled NCCL
// collective does.
class InFlightBackend final : public Backend {
 public:
  explicit InFlightBackend(int stall_after = -1) : Backend(test::world(), "in-flight", 20), stall_after_(stall_after) {}
  bool uses_device_memory() const override { return false; }

  std::set<std::thread::id> threads() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return threads_;
  }
  int failures() const { return failures_; }

 private:
  void touch() {
    std::lock_guard<std::mutex> lock(mutex_);
    threads_.insert(std::this_thread::get_id());
  }
  void transfer_allreduce(void*, std::size_t, DType, void*) override {
    touch();
    ++in_flight_;
  }
  void transfer_in_flight(bool wait) override {
    touch();
    if (stall_after_ >= 0 && ++polls_ > stall_after_) throw Error("stand-in transfer stalled");
    if (wait || in_flight_ > 0) in_flight_ = 0;
  }
  void on_failure() noexcept override {
    touch();
    ++failures_;
  }
  void transfer_broadcast(void*, std::size_t, int, void*) override {}
  void transfer_allgather(const void* in, void* out, std::size_t bytes, void*) override { std::memcpy(out, in, bytes); }
  void transfer_barrier() override {}

  mutable std::mutex mutex_;
  std::set<std::thread::id> threads_;
  int in_flight_ = 0, polls_ = 0, stall_after_;
  std::atomic<int> failures_{0};
};

std::vector<NamedTensor> parameters(torch::nn::Linear& layer) {
  std::vector<NamedTensor> out;
  for (auto& p : layer->named_parameters()) out.push_back({p.key(), p.value()});
  return out;
}

TEST(EngineThreads, OnlyTheCommunicationThreadDrivesTransfersInFlight) {
  InFlightBackend backend;
  torch::nn::Linear layer(64, 32);
  const std::vector<BucketSizes> candidates = {{0.001, 0.0005}, {8, 1}};
  autotune_buckets(backend, test::world(), parameters(layer), {}, candidates, 3);
  const auto threads = backend.threads();
  EXPECT_EQ(threads.count(std::this_thread::get_id()), 0u) << "the main thread touched the transfers in flight";
  // One engine per candidate, each with its own communication thread; never two on one engine.
  EXPECT_LE(threads.size(), candidates.size());
}

TEST(EngineThreads, AStallIsGivenUpOnceByTheThreadThatSawIt) {
  InFlightBackend backend(/*stall_after=*/0);
  torch::nn::Linear layer(16, 8);
  GradientEngineOptions options;
  options.reduce_alone = true;
  GradientEngine engine(backend, test::world(), parameters(layer), options, /*install_hooks=*/false);
  std::vector<at::Tensor> grads;
  for (auto& p : layer->parameters()) grads.push_back(at::ones_like(p));
  engine.prepare(true);
  for (std::size_t t = grads.size(); t-- > 0;) engine.submit(t, grads[t]);
  try {
    engine.finish();
    engine.wait_transfers();
    FAIL() << "the stalled transfer was not reported";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("stand-in transfer stalled"), std::string::npos) << e.what();
  }
  EXPECT_EQ(backend.failures(), 1);
  EXPECT_EQ(backend.threads().count(std::this_thread::get_id()), 0u);
}

}  // namespace
}  // namespace ft
