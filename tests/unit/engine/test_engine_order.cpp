// The gradient engine in a CollectiveOrder beside a second communicator (synchronised BatchNorm's): a bucket
// takes its place when it becomes ready, so a sum issued between two buckets' gradients is enqueued between
// their all-reduces, however late the communication thread is; a failed bucket abandons the order.
#include <gtest/gtest.h>
#include <torch/nn/modules/linear.h>

#include <chrono>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "comm/collective_order.h"
#include "comm/stall_inspector.h"
#include "engine/engine.h"
#include "test_world.h"

namespace ft {
namespace {

// The labels of the all-reduces every RecordingBackend enqueued, in order.
struct EnqueueLog {
  std::mutex mutex;
  std::vector<std::string> labels;
};

// An all-reduce that is "enqueued" (logged) `delay_ms` after its call, as a late communication thread would
// enqueue it; `fail` makes the engine's bucket transfers throw instead.
class RecordingBackend final : public Backend {
 public:
  RecordingBackend(EnqueueLog& log, int delay_ms, bool fail = false)
      : Backend(test::world(), "recording", 20), log_(log), delay_ms_(delay_ms), fail_(fail) {}
  bool uses_device_memory() const override { return false; }

 private:
  void transfer_allreduce(void*, std::size_t, DType, void*) override {
    std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms_));
    if (fail_) throw Error("stand-in transfer failed");
    const std::lock_guard<std::mutex> lock(log_.mutex);
    log_.labels.push_back(CollectiveLabel::current());
  }
  void transfer_broadcast(void*, std::size_t, int, void*) override {}
  void transfer_allgather(const void* in, void* out, std::size_t bytes, void*) override { std::memcpy(out, in, bytes); }
  void transfer_barrier() override {}

  EnqueueLog& log_;
  int delay_ms_;
  bool fail_;
};

// Every tensor a bucket of its own, packed (a fusion buffer each), the communication thread even alone.
GradientEngineOptions one_bucket_per_tensor(CollectiveOrder* order) {
  GradientEngineOptions options;
  options.reduce_alone = true;
  options.in_place = false;
  options.first_bucket_mib = options.bucket_mib = options.last_bucket_mib = 1e-6;
  options.order = order;
  return options;
}

// The sum autograd's thread issues between two buckets: its place, its turn, its all-reduce on `backend`.
void norm_sum(CollectiveOrder* order, Backend& backend) {
  float sums[2] = {1, 2};
  const CollectiveLabel label("batch norm sum");
  const CollectiveTurn turn(order, order ? order->take() : 0, "the batch norm sum");
  backend.allreduce(sums, 2, DType::kFloat32);
}

std::vector<std::string> run_step(CollectiveOrder* order, EnqueueLog& log) {
  RecordingBackend gradients(log, /*delay_ms=*/80), norms(log, 0);
  torch::nn::Linear layer(8, 4);
  std::vector<NamedTensor> named;
  for (auto& p : layer->named_parameters()) named.push_back({p.key(), p.value()});
  GradientEngine engine(gradients, test::world(), named, one_bucket_per_tensor(order), /*install_hooks=*/false);
  EXPECT_EQ(engine.buckets().size(), 2u);
  engine.prepare(true);
  const auto submit_bucket = [&](std::size_t b) {
    for (const std::size_t t : engine.buckets()[b].tensors) engine.submit(t, at::ones_like(named[t].tensor));
  };
  submit_bucket(0);
  norm_sum(order, norms);
  submit_bucket(1);
  engine.finish();
  return log.labels;
}

TEST(EngineOrder, ASumIssuedBetweenTwoBucketsIsEnqueuedBetweenThem) {
  CollectiveOrder order(20);
  EnqueueLog log;
  EXPECT_EQ(run_step(&order, log), (std::vector<std::string>{"bucket 0 of step 1", "batch norm sum", "bucket 1 of step 1"}));
}

// The control: without the order the sum goes first, ahead of the late communication thread (the order one
// rank's threads happen to take, which another rank's need not share).
TEST(EngineOrder, WithoutTheOrderTheLateBucketComesAfterTheSum) {
  EnqueueLog log;
  const std::vector<std::string> labels = run_step(nullptr, log);
  ASSERT_EQ(labels.size(), 3u);
  EXPECT_EQ(labels[0], "batch norm sum");
}

TEST(EngineOrder, AFailedBucketAbandonsTheOrderSoASumDoesNotWaitForIt) {
  CollectiveOrder order(30);
  EnqueueLog log;
  RecordingBackend gradients(log, 0, /*fail=*/true), norms(log, 0);
  torch::nn::Linear layer(8, 4);
  std::vector<NamedTensor> named;
  for (auto& p : layer->named_parameters()) named.push_back({p.key(), p.value()});
  GradientEngine engine(gradients, test::world(), named, one_bucket_per_tensor(&order), false);
  engine.prepare(true);
  for (const std::size_t t : engine.buckets()[0].tensors) engine.submit(t, at::ones_like(named[t].tensor));
  const auto start = std::chrono::steady_clock::now();
  try {
    norm_sum(&order, norms);
    FAIL() << "the sum was enqueued after a bucket before it failed";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("was not enqueued: the all-reduce of bucket 0 failed"), std::string::npos)
        << e.what();
  }
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 10.0);
  EXPECT_THROW(engine.finish(), std::exception);
}

}  // namespace
}  // namespace ft
