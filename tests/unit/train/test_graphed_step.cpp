// GraphedStep's bookkeeping on the CPU with a stand-in recording (the work kept and run again on replay, as
// a CUDA graph relaunches it): eager warm-up steps, one capture, replays that read each step's batch from
// the static inputs, and a refused change of shape.
#include <gtest/gtest.h>

#include "runtime/error.h"
#include "train/graphed_step.h"

namespace ft {
namespace {

class KeptWork final : public Recording {
 public:
  explicit KeptWork(int& captures) : captures_(captures) {}
  void capture(const std::function<void()>& work) override {
    ++captures_;
    work_ = work;  // recorded, not run: a graph's capture launches nothing
  }
  void replay() override { work_(); }

 private:
  int& captures_;
  std::function<void()> work_;
};

struct Counts {
  int bodies = 0, captures = 0;
};

GraphedStep make_step(Counts& counts) {
  return GraphedStep(
      [&counts](const StepBuffers& b) {
        ++counts.bodies;
        b.loss.copy_(b.x.sum());
        b.correct.copy_(b.y.sum());
      },
      [&counts] { return std::make_unique<KeptWork>(counts.captures); });
}

TEST(GraphedStep, WarmsUpEagerlyThenCapturesOnceAndReplays) {
  Counts counts;
  GraphedStep step = make_step(counts);
  for (int i = 0; i < GraphedStep::kWarmupSteps; ++i) {
    step.run(at::ones({4, 3}), at::ones({4}, at::kLong));
    EXPECT_FALSE(step.captured());
  }
  EXPECT_EQ(counts.bodies, GraphedStep::kWarmupSteps);
  EXPECT_EQ(counts.captures, 0);
  for (int i = 0; i < 5; ++i) step.run(at::ones({4, 3}), at::ones({4}, at::kLong));
  EXPECT_TRUE(step.captured());
  EXPECT_EQ(counts.captures, 1);
  EXPECT_EQ(counts.bodies, GraphedStep::kWarmupSteps + 5) << "the capturing step must also run (replayed once)";
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

}  // namespace
}  // namespace ft
