// One thread owns a backend's transfers in flight: with a stand-in device backend (every all-reduce left in
// flight, as NCCL's are), only the engine's communication thread polls, waits for and gives up on them,
// during training steps and bucket autotuning alike, and a stalled transfer is given up once.
#include <gtest/gtest.h>
#include <torch/nn/modules/linear.h>

#include <thread>

#include "engine/engine.h"
#include "engine/engine_autotune.h"
#include "engine/in_flight_backends.h"
#include "test_world.h"

namespace ft {
namespace {

using test::CommunicatorBackend;
using test::InFlightBackend;

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

// The communicator and its queue are unguarded, as NCCL's are: the thread that made the backend never
// touches them, and under ThreadSanitizer (tests/tsan) no two threads do without ordering.
TEST(EngineThreads, AutotuningLeavesTheCommunicatorToOneThread) {
  CommunicatorBackend backend(/*wait_ms=*/60);
  torch::nn::Linear layer(64, 32);
  const std::vector<BucketSizes> candidates = {{0.001, 0.0005}, {8, 1}};
  const auto result = autotune_buckets(backend, test::world(), parameters(layer), {}, candidates, 3);
  EXPECT_EQ(result.trials.size(), 2u);
  EXPECT_EQ(backend.touches_by_maker(), 0);
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
