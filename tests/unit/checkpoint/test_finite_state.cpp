// Tests of checkpoint/finite_state.cpp: the state a checkpoint guards holds the network, the optimizer's state and
// every extra tensor (lookahead's slow weights) by name, and the first non-finite one is named, whatever its place.
#include "checkpoint/finite_state.h"

#include <gtest/gtest.h>

#include <limits>

#include "checkpoint/model_file.h"
#include "optim/optimizer.h"
#include "tiny_network.h"

namespace ft {
namespace {

TEST(FiniteState, HoldsTheNetworkTheOptimizerAndEachExtraByName) {
  at::manual_seed(0);
  auto net = test::tiny_network();
  const std::size_t model_tensors = model_state(*net).size();
  std::vector<at::Tensor> parameters = net->parameters();
  OptimizerConfig sgd;
  sgd.momentum = 0.9;
  auto optimizer = make_optimizer(sgd, parameters);
  test::tiny_step(*net, *optimizer);  // momentum buffers exist from the first step on

  const std::vector<at::Tensor> extra = {at::ones({3}), at::zeros({2, 2})};
  const NamedTensors bare = saved_state(*net, nullptr, {});
  EXPECT_EQ(bare.size(), model_tensors);
  const NamedTensors state = saved_state(*net, optimizer.get(), extra);
  std::size_t optimizer_tensors = 0;
  for (const auto& [name, tensor] : state) optimizer_tensors += name.rfind("optimizer.", 0) == 0;
  EXPECT_EQ(optimizer_tensors, parameters.size()) << "one momentum buffer per parameter";
  ASSERT_EQ(state.size(), model_tensors + optimizer_tensors + extra.size());
  EXPECT_EQ(state[state.size() - 2].first, "extra.0");
  EXPECT_EQ(state.back().first, "extra.1");
  EXPECT_TRUE(state.back().second.is_same(extra[1]));
}

TEST(FiniteState, NamesTheFirstNonFiniteTensorWhereverItIs) {
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  NamedTensors state = {{"a", at::zeros({4})}, {"b", at::ones({2, 2})}, {"c", at::zeros({3})}};
  EXPECT_EQ(first_non_finite(state), "");
  state[2].second[1] = nan;
  EXPECT_EQ(first_non_finite(state), "c") << "the last tensor";
  state[0].second[0] = -inf;
  EXPECT_EQ(first_non_finite(state), "a") << "the first of two";
  state[0].second[0] = 0, state[2].second[1] = 0, state[1].second[1][1] = inf;
  EXPECT_EQ(first_non_finite(state), "b") << "one element of a matrix";
}

TEST(FiniteState, SkipsWhatCannotHoldANonFiniteValue) {
  NamedTensors state = {{"undefined", at::Tensor()},
                        {"empty", at::empty({0})},
                        {"steps", at::full({1}, 7, at::kLong)},
                        {"ok", at::ones({2})}};
  EXPECT_EQ(first_non_finite(state), "");
  EXPECT_EQ(first_non_finite({}), "");
  state.emplace_back("late", at::full({1}, std::numeric_limits<float>::quiet_NaN()));
  EXPECT_EQ(first_non_finite(state), "late");
}

}  // namespace
}  // namespace ft
