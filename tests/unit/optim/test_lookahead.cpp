// Tests of lookahead: the decay schedule, pulls only every k steps, the slow copy trailing the weights,
// integer buffers left alone (and nothing to average at all), and finish() leaving the slow weights in place.
#include <gtest/gtest.h>

#include <ATen/core/grad_mode.h>

#include <cmath>

#include "optim/lookahead.h"

namespace ft {
namespace {

TEST(Lookahead, DecayRisesAsTheCubeOfProgress) {
  EXPECT_DOUBLE_EQ(Lookahead::decay(0, 100), 0.0);
  EXPECT_NEAR(Lookahead::decay(50, 100), std::pow(0.95, 5) * 0.125, 1e-15);
  EXPECT_NEAR(Lookahead::decay(100, 100), std::pow(0.95, 5), 1e-15);
}

TEST(Lookahead, PullsEveryKStepsAndFinishesOnTheSlowCopy) {
  auto w = at::zeros({4}, at::kFloat);
  auto counter = at::zeros({1}, at::kLong);
  Lookahead lookahead({w, counter}, 2, 4);
  ASSERT_EQ(lookahead.slow().size(), 1u);  // the integer buffer is not averaged

  w.fill_(1.0);  // "training" moved the weights
  lookahead.after_step(1);
  EXPECT_FLOAT_EQ(w[0].item<float>(), 1.0f);  // no pull on step 1
  lookahead.after_step(2);                     // d = 0.95^5 / 8
  const double d = Lookahead::decay(2, 4);
  EXPECT_NEAR(w[0].item<float>(), 1.0 - d, 1e-6);
  EXPECT_NEAR(lookahead.slow()[0][0].item<float>(), 1.0 - d, 1e-6);

  w.fill_(3.0);
  lookahead.finish();  // d = 1: the weights return to the slow copy
  EXPECT_NEAR(w[0].item<float>(), 1.0 - d, 1e-6);
  counter.fill_(7);
  lookahead.finish();
  EXPECT_EQ(counter.item<std::int64_t>(), 7);
}

// A model whose state holds no floating tensor (only counters, or nothing): nothing to average, and the pulls
// of every step and the last one do nothing rather than fail.
TEST(Lookahead, NothingToAverageIsNoPullAndNoError) {
  auto counter = at::full({1}, 3, at::kLong);
  for (const auto& tensors : {std::vector<at::Tensor>{counter}, std::vector<at::Tensor>{}}) {
    Lookahead lookahead(tensors, 1, 2);
    EXPECT_TRUE(lookahead.slow().empty());
    EXPECT_NO_THROW(lookahead.after_step(1));
    EXPECT_NO_THROW(lookahead.after_step(2));
    EXPECT_NO_THROW(lookahead.finish());
  }
  EXPECT_EQ(counter.item<std::int64_t>(), 3);
}

// One pull over many tensors at once (parameters that require gradients, a channels_last weight, another
// dtype) moves each exactly as its own lerp and copy would.
TEST(Lookahead, PullsEveryTensorAsItsOwnLerp) {
  at::manual_seed(4);
  std::vector<at::Tensor> tensors = {at::randn({3, 2}).requires_grad_(true),
                                     at::randn({2, 3, 3, 3}).contiguous(at::MemoryFormat::ChannelsLast),
                                     at::randn({5}, at::kDouble)};
  Lookahead lookahead(tensors, 1, 10);
  std::vector<at::Tensor> slow, trained;
  {
    at::NoGradGuard no_grad;
    for (auto& t : tensors) {
      slow.push_back(t.detach().clone());
      t.add_(at::randn_like(t));
      trained.push_back(t.detach().clone());
    }
  }
  lookahead.after_step(5);
  const double d = Lookahead::decay(5, 10);
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    const auto expected = slow[i].lerp(trained[i], 1.0 - d);
    EXPECT_TRUE(at::equal(tensors[i].detach(), expected)) << "tensor " << i;
    EXPECT_TRUE(at::equal(lookahead.slow()[i], expected)) << "slow copy " << i;
  }
  EXPECT_TRUE(tensors[1].is_contiguous(at::MemoryFormat::ChannelsLast));
}

}  // namespace
}  // namespace ft
