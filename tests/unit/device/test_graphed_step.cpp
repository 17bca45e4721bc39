// GraphedStep's bookkeeping on the CPU with a stand-in recording (the work kept and run again on replay, as
// a CUDA graph relaunches it): eager warm-up steps through it, one capture, replays that read each step's
// batch from the static inputs, and a refused change of shape; and the one gradient buffer backward fills,
// whose all-reduces stay within their bound in flight.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "comm/backend.h"
#include "runtime/error.h"
#include "test_world.h"
#include "device/graphed_step.h"

namespace ft {
namespace {

struct Counts {
  int bodies = 0, warm_ups = 0, captures = 0, recordings = 0;
  int outside = 0;  // bodies run outside the recording's warm_up, capture or replay
  bool inside = false;
};

class KeptWork final : public Recording {
 public:
  explicit KeptWork(Counts& counts) : counts_(counts) { ++counts_.recordings; }
  void warm_up(const std::function<void()>& work) override {
    ++counts_.warm_ups;
    run(work);
  }
  void capture(const std::function<void()>& work) override {
    ++counts_.captures;
    work_ = work;  // recorded, not run: a graph's capture launches nothing
  }
  void replay() override { run(work_); }

 private:
  void run(const std::function<void()>& work) {
    counts_.inside = true;
    work();
    counts_.inside = false;
  }
  Counts& counts_;
  std::function<void()> work_;
};

GraphedStep make_step(Counts& counts) {
  return GraphedStep(
      [&counts](const StepBuffers& b) {
        ++counts.bodies;
        if (!counts.inside) ++counts.outside;
        b.loss.copy_(b.x.sum());
        b.correct.copy_(b.y.sum());
      },
      [&counts] { return std::make_unique<KeptWork>(counts); });
}

TEST(GraphedStep, WarmsUpEagerlyThenCapturesOnceAndReplays) {
  Counts counts;
  GraphedStep step = make_step(counts);
  for (int i = 0; i < GraphedStep::kWarmupSteps; ++i) {
    step.run(at::ones({4, 3}), at::ones({4}, at::kLong));
    EXPECT_FALSE(step.captured());
  }
  EXPECT_EQ(counts.bodies, GraphedStep::kWarmupSteps);
  EXPECT_EQ(counts.warm_ups, GraphedStep::kWarmupSteps);
  EXPECT_EQ(counts.captures, 0);
  for (int i = 0; i < 5; ++i) step.run(at::ones({4, 3}), at::ones({4}, at::kLong));
  EXPECT_TRUE(step.captured());
  EXPECT_EQ(counts.captures, 1);
  EXPECT_EQ(counts.bodies, GraphedStep::kWarmupSteps + 5) << "the capturing step must also run (replayed once)";
}

// Every step after the warm-up is one replay, the capturing step's own included: what a results file records as
// the proof that the step ran from a graph.
TEST(GraphedStep, CountsOneReplayPerStepAfterTheWarmUp) {
  Counts counts;
  GraphedStep step = make_step(counts);
  for (int i = 0; i < GraphedStep::kWarmupSteps; ++i) step.run(at::ones({4, 3}), at::ones({4}, at::kLong));
  EXPECT_EQ(step.replays(), 0);
  for (int i = 1; i <= 4; ++i) {
    step.run(at::ones({4, 3}), at::ones({4}, at::kLong));
    EXPECT_EQ(step.replays(), i);
  }
  EXPECT_EQ(counts.captures, 1);
}

// The warm-up steps run where the capture will record (a CUDA graph's side stream), through the one
// recording that then captures: a gradient accumulator made on another stream would end the capture.
TEST(GraphedStep, WarmsUpThroughTheRecordingThatCaptures) {
  Counts counts;
  GraphedStep step = make_step(counts);
  for (int i = 0; i < GraphedStep::kWarmupSteps + 3; ++i) step.run(at::ones({4, 3}), at::ones({4}, at::kLong));
  EXPECT_EQ(counts.outside, 0) << "a warm-up step ran outside the recording";
  EXPECT_EQ(counts.recordings, 1) << "warm-up and capture must share one recording (one stream)";
}

// The body sees only the static inputs: each step's own batch must have been copied there, replay or not.
TEST(GraphedStep, EveryStepReadsItsOwnBatch) {
  Counts counts;
  GraphedStep step = make_step(counts);
  for (int i = 1; i <= 8; ++i) {
    const auto x = at::full({4, 3}, static_cast<double>(i));
    const auto y = at::full({4}, i, at::kLong);
    const StepBuffers& out = step.run(x, y);
    EXPECT_DOUBLE_EQ(out.loss.item<double>(), 12.0 * i) << "step " << i;
    EXPECT_EQ(out.correct.item<std::int64_t>(), 4 * i) << "step " << i;
  }
}

TEST(GraphedStep, StaticInputsKeepTheBatchLayout) {
  Counts counts;
  GraphedStep step = make_step(counts);
  const auto x = at::rand({2, 3, 4, 4}).contiguous(at::MemoryFormat::ChannelsLast);
  const StepBuffers& out = step.run(x, at::zeros({2}, at::kLong));
  EXPECT_TRUE(out.x.is_contiguous(at::MemoryFormat::ChannelsLast));
  EXPECT_TRUE(at::equal(out.x, x));
}

TEST(GraphedStep, AnotherShapeIsRefused) {
  Counts counts;
  GraphedStep step = make_step(counts);
  step.run(at::ones({4, 3}), at::ones({4}, at::kLong));
  try {
    step.run(at::ones({2, 3}), at::ones({2}, at::kLong));
    FAIL() << "a smaller batch was accepted";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("a captured step replays one shape"), std::string::npos) << e.what();
  }
}

// Backward accumulates into the buffer itself (so a graph's backward writes memory made outside it): the
// gradients are views of it with each parameter's layout, channels_last included, and after the buffer is
// zeroed a second backward leaves that step's gradients alone, as autograd's own would be.
TEST(GradientsInOneBuffer, BackwardWritesIntoTheBuffer) {
  at::manual_seed(3);
  auto weight = at::randn({4, 3, 3, 3}).contiguous(at::MemoryFormat::ChannelsLast).requires_grad_(true);
  auto bias = at::randn({4}).requires_grad_(true);
  const std::vector<at::Tensor> parameters = {weight, bias};
  const auto x = at::randn({2, 3, 5, 5});
  const auto loss_of = [&] { return at::conv2d(x, weight, bias).square().mean(); };
  loss_of().backward();
  const auto expected_weight = weight.grad().clone(), expected_bias = bias.grad().clone();

  const GradientBuffer gradients(parameters, at::kCPU);
  const at::Tensor& buffer = gradients.tensor();
  EXPECT_EQ(buffer.numel(), weight.numel() + bias.numel());
  EXPECT_TRUE(weight.grad().is_contiguous(at::MemoryFormat::ChannelsLast));
  for (int step = 0; step < 2; ++step) {
    gradients.zero();
    loss_of().backward();
    EXPECT_TRUE(weight.grad().is_alias_of(buffer)) << "step " << step << ": backward replaced the view";
    EXPECT_TRUE(bias.grad().is_alias_of(buffer)) << "step " << step;
    EXPECT_TRUE(at::allclose(weight.grad(), expected_weight)) << "step " << step;
    EXPECT_TRUE(at::allclose(bias.grad(), expected_bias)) << "step " << step;
  }
  EXPECT_TRUE(at::allclose(buffer.narrow(0, weight.numel(), bias.numel()), expected_bias));
}

// A backend that logs what it is asked: the waits for transfers in flight and the all-reduces.
class LoggingBackend final : public Backend {
 public:
  LoggingBackend() : Backend(test::world(), "logging", 20) {}
  bool uses_device_memory() const override { return true; }
  std::vector<std::string> log;

 private:
  void transfer_allreduce(void*, std::size_t count, DType, void*) override {
    log.push_back("all-reduce " + std::to_string(count));
  }
  void transfer_in_flight(std::size_t keep) override {
    if (keep != kPollOnly) log.push_back("wait until " + std::to_string(keep));
  }
  void transfer_broadcast(void*, std::size_t, int, void*) override {}
  void transfer_allgather(const void*, void*, std::size_t, void*) override {}
  void transfer_barrier() override {}
};

// Each all-reduce of the buffer is enqueued only once fewer than kInFlight earlier ones are in flight, so
// a host that never waits for them stays within kInFlight steps of its device.
TEST(GradientsInOneBuffer, AllReducesStayWithinTheirBoundInFlight) {
  const std::vector<at::Tensor> parameters = {at::zeros({4, 2}).requires_grad_(true),
                                              at::zeros({3}).requires_grad_(true)};
  const GradientBuffer gradients(parameters, at::kCPU);
  LoggingBackend backend;
  gradients.allreduce(backend);
  gradients.allreduce(backend);
  const std::string wait = "wait until " + std::to_string(GradientBuffer::kInFlight - 1);
  EXPECT_EQ(backend.log, (std::vector<std::string>{wait, "all-reduce 11", wait, "all-reduce 11"}));
}

// Half weights: the float16 (or bfloat16) parameters' gradients in a buffer of their own type, the float32
// ones' in another; each is all-reduced in one call, and the wait keeps kInFlight steps' worth in flight.
TEST(GradientsInOneBuffer, HalfWeightsGetABufferOfTheirType) {
  for (at::ScalarType half : {at::kHalf, at::kBFloat16}) {
    const std::vector<at::Tensor> parameters = {at::zeros({4, 2}, half).requires_grad_(true),
                                                at::zeros({3}).requires_grad_(true), at::zeros({5}, half).requires_grad_(true)};
    const GradientBuffer gradients(parameters, at::kCPU);
    EXPECT_EQ(gradients.tensor(half).numel(), 13);
    EXPECT_EQ(gradients.tensor(at::kFloat).numel(), 3);
    EXPECT_TRUE(parameters[0].grad().is_alias_of(gradients.tensor(half)));
    EXPECT_TRUE(parameters[2].grad().is_alias_of(gradients.tensor(half)));
    EXPECT_TRUE(parameters[1].grad().is_alias_of(gradients.tensor(at::kFloat)));
    EXPECT_EQ(parameters[0].grad().scalar_type(), half);
    (parameters[0].sum() + parameters[1].sum() * 2 + parameters[2].sum() * 3).backward();
    EXPECT_TRUE(at::equal(gradients.tensor(half).narrow(0, 8, 5), at::full({5}, 3.0, half)));
    gradients.zero();
    EXPECT_EQ(gradients.tensor(at::kFloat).abs().sum().item<float>(), 0.0f);
    LoggingBackend backend;
    gradients.allreduce(backend);
    const std::string wait = "wait until " + std::to_string(2 * (GradientBuffer::kInFlight - 1));
    ASSERT_EQ(backend.log.size(), 3u);
    EXPECT_EQ(backend.log[0], wait);
    std::vector<std::string> reduces(backend.log.begin() + 1, backend.log.end());
    std::sort(reduces.begin(), reduces.end());
    EXPECT_EQ(reduces, (std::vector<std::string>{"all-reduce 13", "all-reduce 3"})) << half;
  }
}

TEST(GradientsInOneBuffer, RefusesAParameterOfAnotherType) {
  const std::vector<at::Tensor> parameters = {at::zeros({3}, at::kDouble).requires_grad_(true)};
  EXPECT_THROW(GradientBuffer(parameters, at::kCPU), Error);
}

}  // namespace
}  // namespace ft
