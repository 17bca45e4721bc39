// The gradient engine and NCCL on one GPU (skipped without one): compressed buckets over NCCL, device clocks
// that time the transfers, bucket autotuning over NCCL, a transfer held up on the device ending in the
// named stall error within the timeout rather than a hang, and the warm-up of every bucket size before step 1.
#include <gtest/gtest.h>
#include <torch/csrc/autograd/autograd.h>
#include <torch/nn/modules/linear.h>

#include <ATen/Context.h>
#include <c10/cuda/CUDAFunctions.h>
#include <c10/cuda/CUDAStream.h>

#include <algorithm>
#include <chrono>
#include <utility>
#include <vector>

#include "comm/backend.h"
#include "runtime/collective_watch.h"
#include "engine/engine.h"
#include "engine/engine_autotune.h"
#include "kernels/cuda_check.h"
#include "kernels/stall.h"
#include "test_world.h"

namespace ft {
namespace {

const at::Device kGpu(at::kCUDA, 0);

std::unique_ptr<Backend> nccl(double stall_timeout_s = 30) {
  BackendOptions options;
  options.name = BackendName::nccl;
  options.cuda_device = 0;
  options.stall_timeout_s = stall_timeout_s;
  return make_backend(test::world(), options);
}

struct TwoGpuLayers {
  TwoGpuLayers() { a->to(kGpu), b->to(kGpu); }
  torch::nn::Linear a{64, 128}, b{128, 10};
  std::vector<NamedTensor> named() {
    std::vector<NamedTensor> out;
    for (auto& p : a->named_parameters()) out.push_back({"a." + p.key(), p.value()});
    for (auto& p : b->named_parameters()) out.push_back({"b." + p.key(), p.value()});
    return out;
  }
  at::Tensor loss(const at::Tensor& x) { return b(a(x).relu()).pow(2).sum(); }
};

GradientEngineOptions through_nccl(at::ScalarType wire) {
  GradientEngineOptions options;
  options.reduce_alone = true;  // one rank, yet every bucket goes through NCCL
  options.wire = wire;
  options.first_bucket_mib = 0.01;
  options.bucket_mib = 0.02;
  return options;
}

void expect_gradients_through(at::ScalarType wire, double rtol) {
  auto backend = nccl();
  at::manual_seed(3);
  TwoGpuLayers net;
  auto named = net.named();
  std::vector<at::Tensor> params;
  for (auto& n : named) params.push_back(n.tensor);
  const auto x = at::randn({16, 64}, kGpu);
  const auto expected = torch::autograd::grad({net.loss(x)}, params);
  GradientEngine engine(*backend, test::world(), named, through_nccl(wire));
  ASSERT_GE(engine.buckets().size(), 2u);
  engine.prepare(true);
  net.loss(x).backward();
  engine.finish();
  for (std::size_t i = 0; i < params.size(); ++i) {
    const auto& g = params[i].grad();
    EXPECT_TRUE(at::allclose(g, expected[i], rtol, 1e-3)) << named[i].name;
    EXPECT_TRUE(at::equal(g, g.to(wire).to(at::kFloat))) << named[i].name << " did not travel as " << wire;
  }
}

TEST(EngineCuda, Fp16CompressionOverNccl) {
  if (!at::hasCUDA()) GTEST_SKIP() << "no CUDA device";
  expect_gradients_through(at::kHalf, 2e-3);
}

TEST(EngineCuda, Bf16CompressionOverNccl) {
  if (!at::hasCUDA()) GTEST_SKIP() << "no CUDA device";
  expect_gradients_through(at::kBFloat16, 8e-3);
}

// Device events time the transfers. Each of 20 steps holds the compute stream for 20 ms between backward and
// the engine's finish(): the transfers (a few KiB, enqueued during backward) run during that stall, so they
// end before backward's end and nothing is exposed; and the host runs more than the clocks' 8 steps ahead,
// so begin_step() waits for steps whose backward's end is still behind a stall. Every step is timed; the
// transfers take microseconds, not the stall's milliseconds; both sums fit in the wall time.
TEST(EngineCuda, DeviceClocksTimeTheTransfers) {
  if (!at::hasCUDA()) GTEST_SKIP() << "no CUDA device";
  constexpr int kSteps = 20;
  constexpr double kStallS = 0.02;
  auto backend = nccl();
  TwoGpuLayers net;
  GradientEngine engine(*backend, test::world(), net.named(), through_nccl(at::kFloat));
  const auto start = std::chrono::steady_clock::now();
  for (int step = 0; step < kSteps; ++step) {
    engine.prepare(true);
    net.loss(at::randn({16, 64}, kGpu)).backward();
    stall_stream_device(kStallS, c10::cuda::getCurrentCUDAStream().stream());
    engine.finish();
  }
  c10::cuda::device_synchronize();
  const double wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const EngineStats stats = engine.stats();
  const auto transfers = kSteps * static_cast<std::int64_t>(engine.buckets().size());
  EXPECT_EQ(stats.buckets, transfers);
  EXPECT_EQ(stats.untimed_steps, 0) << "steps whose device times were lost";
  EXPECT_GE(wall_s, kSteps * kStallS) << "the stall kernel did not hold the stream";
  EXPECT_GT(stats.allreduce_s, transfers * 1e-6) << "no device time collected for the transfers";
  EXPECT_LT(stats.allreduce_s, 0.25 * kSteps * kStallS) << "the transfers were timed with the stall";
  EXPECT_GE(stats.wait_s, 0);
  EXPECT_LT(stats.wait_s, 0.25 * kSteps * kStallS) << "exposed time counted the stall before backward's end";
  EXPECT_LE(stats.allreduce_s + stats.wait_s, wall_s);
}

TEST(EngineCuda, AutotuneOverNccl) {
  if (!at::hasCUDA()) GTEST_SKIP() << "no CUDA device";
  auto backend = nccl();
  TwoGpuLayers net;
  const AutotuneResult result =
      autotune_buckets(*backend, test::world(), net.named(), {}, {{0.01, 0.005}, {4, 1}}, 2);
  ASSERT_EQ(result.trials.size(), 2u);
  for (const BucketTrial& trial : result.trials) EXPECT_GT(trial.seconds, 0);
}

// A transfer queued behind a kernel that holds its stream for 4 s, with a 1 s stall timeout: the wait
// ends with the stall error naming the transfer, well before the kernel ends (the communicator's abort,
// which returns only when the kernel has ended, runs on a thread of its own).
TEST(EngineCuda, TransferHeldUpOnTheDeviceIsAStallNotAHang) {
  if (!at::hasCUDA()) GTEST_SKIP() << "no CUDA device";
  auto backend = nccl(/*stall_timeout_s=*/1);
  auto data = at::ones({1024}, kGpu);
  const auto stream = c10::cuda::getStreamFromPool(true, 0);
  stall_stream_device(4.0, stream.stream());
  const auto start = std::chrono::steady_clock::now();
  double enqueued = -1;
  try {
    backend->allreduce(data.data_ptr(), 1024, DType::kFloat32, stream.stream());
    enqueued = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    backend->wait_in_flight();
    FAIL() << "the held-up transfer was not reported";
  } catch (const StallError& e) {
    EXPECT_NE(std::string(e.what()).find("was enqueued but has not completed"), std::string::npos) << e.what();
  }
  const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_LT(waited, 3.5) << "the stall was noticed only after the stream was free again (the all-reduce "
                         << (enqueued < 0 ? std::string("threw") : "returned after " + std::to_string(enqueued) + " s")
                         << ")";
  backend.reset();  // waits for the abort, which ends soon after the kernel: must return
  c10::cuda::device_synchronize();
}

// Polling what is in flight never waits for the device: behind a 2 s kernel an event query returns at once,
// and so does the backend's poll of a transfer queued behind it. A poll that blocked would hide a stall
// from its timeout (on an H200, 2026-11-27, the 4 s stall above was noticed only after 4 s).
TEST(EngineCuda, PollingNeverWaitsForTheDevice) {
  if (!at::hasCUDA()) GTEST_SKIP() << "no CUDA device";
  auto backend = nccl(/*stall_timeout_s=*/30);
  auto data = at::ones({1024}, kGpu);
  const auto stream = c10::cuda::getStreamFromPool(true, 0);
  stall_stream_device(2.0, stream.stream());
  const auto seconds = [](auto&& call) {
    const auto start = std::chrono::steady_clock::now();
    call();
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  cudaEvent_t behind = nullptr;
  FT_CHECK_CUDA(cudaEventCreateWithFlags(&behind, cudaEventDisableTiming));
  FT_CHECK_CUDA(cudaEventRecord(behind, stream.stream()));
  EXPECT_LT(seconds([&] { EXPECT_EQ(cudaEventQuery(behind), cudaErrorNotReady); }), 0.1)
      << "cudaEventQuery waited for the device";
  EXPECT_LT(seconds([&] { backend->allreduce(data.data_ptr(), 1024, DType::kFloat32, stream.stream()); }), 0.1)
      << "enqueueing the all-reduce waited for the device";
  EXPECT_LT(seconds([&] { backend->poll_in_flight(); }), 0.1) << "the backend's poll waited for the device";
  backend->wait_in_flight();
  FT_CHECK_CUDA(cudaEventDestroy(behind));
}

// A device backend that records the size and type of each all-reduce it is handed (nothing moves).
class CountingDeviceBackend final : public Backend {
 public:
  CountingDeviceBackend() : Backend(test::world(), "counting", 20) {}
  bool uses_device_memory() const override { return true; }
  std::vector<std::pair<std::size_t, DType>> calls;

 private:
  void transfer_allreduce(void*, std::size_t count, DType dtype, void*) override { calls.emplace_back(count, dtype); }
  void transfer_broadcast(void*, std::size_t, int, void*) override {}
  void transfer_allgather(const void*, void*, std::size_t, void*) override {}
  void transfer_barrier() override {}
};

// NCCL connects the channels a size needs on its first collective of that size: the engine sends one all-reduce
// of each distinct bucket size and wire type while it is made, before any step, and none twice.
TEST(EngineCuda, WarmsUpEveryBucketSizeBeforeTheFirstStep) {
  if (!at::hasCUDA()) GTEST_SKIP() << "no CUDA device";
  CountingDeviceBackend backend;
  torch::nn::Linear first(16, 16), second(16, 16);  // two weights of 256 floats, two biases of 16
  first->to(kGpu), second->to(kGpu);
  std::vector<NamedTensor> named;
  for (auto& p : first->named_parameters()) named.push_back({"first." + p.key(), p.value()});
  for (auto& p : second->named_parameters()) named.push_back({"second." + p.key(), p.value()});
  GradientEngineOptions options = through_nccl(at::kFloat);
  options.first_bucket_mib = options.bucket_mib = options.last_bucket_mib = 1e-6;  // a bucket per tensor
  GradientEngine engine(backend, test::world(), named, options);
  ASSERT_EQ(engine.buckets().size(), 4u);
  // Each bucket's buffer holds its gradients and the status element: 257 and 17 floats, twice each.
  auto calls = backend.calls;
  std::sort(calls.begin(), calls.end());
  EXPECT_EQ(calls, (std::vector<std::pair<std::size_t, DType>>{{17, DType::kFloat32}, {257, DType::kFloat32}}))
      << "not one all-reduce of each distinct bucket size";
}

}  // namespace
}  // namespace ft
