// Tests of per-parameter optimizer rules: grouping by rule, learning rates scaled and weight decay divided
// per group, frozen parameters left out, and a group's learning rate dropping to zero after its epochs.
#include <gtest/gtest.h>

#include <torch/optim/sgd.h>

#include "runtime/error.h"
#include "optim/optimizer.h"

namespace ft {
namespace {

struct Named {
  std::vector<std::pair<std::string, at::Tensor>> list;
  at::Tensor add(const std::string& name, bool trainable = true) {
    auto t = at::ones({3}).set_requires_grad(trainable);
    list.emplace_back(name, t);
    return t;
  }
};

TEST(OptimizerGroups, RulesMakeGroupsWithScaledRatesAndDecay) {
  Named n;
  const auto w = n.add("conv.weight");
  const auto frozen = n.add("norm.weight", false);
  const auto b1 = n.add("norm1.bias");
  const auto b2 = n.add("norm2.bias");
  const auto early = n.add("whiten.bias");
  const std::map<std::string, ParameterRule> rules = {
      {"norm1.bias", {64, 0}}, {"norm2.bias", {64, 0}}, {"whiten.bias", {1, 3}}};
  const auto groups = group_parameters(n.list, rules);
  ASSERT_EQ(groups.size(), 3u);
  ASSERT_EQ(groups[0].parameters.size(), 1u);  // the frozen norm.weight is in no group
  EXPECT_TRUE(groups[0].parameters[0].is_same(w));
  EXPECT_EQ(groups[1].parameters.size() + groups[2].parameters.size(), 3u);

  OptimizerConfig c;
  c.name = OptimizerName::sgd;
  c.lr = 0.5;
  c.momentum = 0.9;
  c.weight_decay = 0.01;
  auto optimizer = make_optimizer(c, groups);
  ASSERT_EQ(optimizer->param_groups().size(), 3u);
  for (std::size_t i = 0; i < groups.size(); ++i) {
    const auto& options = static_cast<const torch::optim::SGDOptions&>(optimizer->param_groups()[i].options());
    EXPECT_DOUBLE_EQ(options.lr() * options.weight_decay(), 0.5 * 0.01) << "group " << i;
    EXPECT_DOUBLE_EQ(options.lr(), 0.5 * groups[i].rule.lr_scale) << "group " << i;
  }

  auto lr_of = [&](const at::Tensor& t) {
    for (std::size_t i = 0; i < groups.size(); ++i)
      for (const auto& p : groups[i].parameters)
        if (p.is_same(t)) return optimizer->param_groups()[i].options().get_lr();
    return -1.0;
  };
  set_learning_rate(*optimizer, groups, 0.2, 3);
  EXPECT_DOUBLE_EQ(lr_of(w), 0.2);
  EXPECT_DOUBLE_EQ(lr_of(b1), 0.2 * 64);
  EXPECT_DOUBLE_EQ(lr_of(b2), 0.2 * 64);
  EXPECT_DOUBLE_EQ(lr_of(early), 0.2);
  set_learning_rate(*optimizer, groups, 0.2, 4);
  EXPECT_DOUBLE_EQ(lr_of(early), 0.0);
  EXPECT_DOUBLE_EQ(lr_of(w), 0.2);
  EXPECT_EQ(lr_of(frozen), -1.0);
}

TEST(OptimizerGroups, ARuleForAMissingOrFrozenParameterIsAnError) {
  Named n;
  n.add("conv.weight");
  n.add("norm.weight", false);
  EXPECT_THROW(group_parameters(n.list, {{"nope.bias", {2, 0}}}), Error);
  EXPECT_THROW(group_parameters(n.list, {{"norm.weight", {2, 0}}}), Error);
  EXPECT_EQ(group_parameters(n.list, {}).size(), 1u);
}

// A rule with own_decay ignores the schedule: its rate falls from lr_scale x the base rate at step 0 to zero at
// the end of its train_epochs (3 epochs of 10 steps: step 15 is half-way), the others follow the schedule.
TEST(OptimizerGroups, OwnDecayFallsToZeroOverItsTrainEpochs) {
  Named n;
  const auto w = n.add("conv.weight");
  const auto early = n.add("whiten.bias");
  const auto groups = group_parameters(n.list, {{"whiten.bias", {2.0, 3, true}}});
  ASSERT_EQ(groups.size(), 2u);
  OptimizerConfig c;
  c.lr = 0.5;
  auto optimizer = make_optimizer(c, groups);
  SchedulerConfig s;
  s.name = SchedulerName::linear_decay;
  const LearningRateSchedule schedule(s, 0.5, 10, 8);
  const auto lr_of = [&](std::size_t g) { return optimizer->param_groups()[g].options().get_lr(); };
  const std::vector<std::pair<std::int64_t, double>> expected = {{0, 1.0}, {15, 0.5}, {29, 1.0 / 30.0}, {30, 0.0}};
  for (const auto& [step, own] : expected) {
    set_learning_rate(*optimizer, groups, schedule, step, static_cast<int>(step / 10) + 1);
    EXPECT_DOUBLE_EQ(lr_of(1), own) << "step " << step;
    EXPECT_DOUBLE_EQ(lr_of(0), schedule.at(step)) << "step " << step;
  }
  set_learning_rate(*optimizer, groups, schedule, 45, 5);  // frozen after its epochs
  EXPECT_DOUBLE_EQ(lr_of(1), 0.0);
  (void)w, (void)early;
}

// Rules that differ only in own_decay, or only in their (non-zero) train_epochs, make two groups.
TEST(OptimizerGroups, OwnDecayIsPartOfTheGroupKey) {
  Named n;
  n.add("a.bias"), n.add("b.bias");
  EXPECT_EQ(group_parameters(n.list, {{"a.bias", {2.0, 3, true}}, {"b.bias", {2.0, 3, false}}}).size(), 2u);
  EXPECT_EQ(group_parameters(n.list, {{"a.bias", {2.0, 3, true}}, {"b.bias", {2.0, 3, true}}}).size(), 1u);
  EXPECT_EQ(group_parameters(n.list, {{"a.bias", {2.0, 3, false}}, {"b.bias", {2.0, 5, false}}}).size(), 2u);
}

}  // namespace
}  // namespace ft
