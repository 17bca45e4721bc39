// Tests of ft::LossScaler, the fp16 dynamic loss scaling (CPU tensors, since fp16 training itself needs CUDA):
// inf/NaN gradients skip the step and halve the scale, growth_interval clean steps double it.
#include <gtest/gtest.h>

#include <limits>
#include <vector>

#include "optim/precision.h"
#include "runtime/error.h"

namespace ft {
namespace {

// One parameter whose gradient is `grad` (a scaled gradient, as backward of a scaled loss leaves it).
std::vector<at::Tensor> parameter_with_grad(std::vector<float> grad) {
  auto p = at::zeros({static_cast<std::int64_t>(grad.size())}, at::kFloat).requires_grad_();
  p.mutable_grad() = at::tensor(grad, at::kFloat);
  return {p};
}

// A clean step: unscale must succeed, then the scale is updated.
void clean_step(LossScaler& scaler) {
  ASSERT_TRUE(scaler.unscale(parameter_with_grad({1.0f, 2.0f})));
  scaler.update();
}

TEST(LossScaler, DisabledIsTheIdentity) {
  LossScaler scaler(false, 1024.0, 3, at::kCPU);
  const auto loss = at::tensor({0.5f});
  EXPECT_TRUE(at::equal(scaler.scale(loss), loss));
  auto params = parameter_with_grad({std::numeric_limits<float>::infinity()});
  EXPECT_TRUE(scaler.unscale(params));  // fp32/bf16 runs never skip a step here
  scaler.update();
  EXPECT_EQ(scaler.current_scale(), 1024.0);
}

TEST(LossScaler, ScalesTheLossAndUnscalesGradients) {
  LossScaler scaler(true, 256.0, 2000, at::kCPU);
  EXPECT_FLOAT_EQ(scaler.scale(at::tensor({0.5f})).item<float>(), 128.0f);
  auto params = parameter_with_grad({256.0f, -512.0f});
  EXPECT_TRUE(scaler.unscale(params));
  EXPECT_FLOAT_EQ(params[0].grad()[0].item<float>(), 1.0f);
  EXPECT_FLOAT_EQ(params[0].grad()[1].item<float>(), -2.0f);
}

TEST(LossScaler, InfGradientSkipsTheStepAndBacksOff) {
  LossScaler scaler(true, 65536.0, 2000, at::kCPU);
  EXPECT_FALSE(scaler.unscale(parameter_with_grad({1.0f, std::numeric_limits<float>::infinity()})));
  scaler.update();
  EXPECT_EQ(scaler.current_scale(), 32768.0);
  EXPECT_FALSE(scaler.unscale(parameter_with_grad({std::numeric_limits<float>::quiet_NaN()})));
  scaler.update();
  EXPECT_EQ(scaler.current_scale(), 16384.0);
}

TEST(LossScaler, GrowsAfterGrowthIntervalCleanSteps) {
  LossScaler scaler(true, 8.0, 3, at::kCPU);
  clean_step(scaler);
  clean_step(scaler);
  EXPECT_EQ(scaler.current_scale(), 8.0);  // not yet: 2 of 3 clean steps
  clean_step(scaler);
  EXPECT_EQ(scaler.current_scale(), 16.0);
  EXPECT_EQ(scaler.growth_state().item<int>(), 0);
}

TEST(LossScaler, OverflowRestartsTheGrowthCount) {
  LossScaler scaler(true, 8.0, 3, at::kCPU);
  clean_step(scaler);
  clean_step(scaler);
  EXPECT_FALSE(scaler.unscale(parameter_with_grad({-std::numeric_limits<float>::infinity()})));
  scaler.update();
  EXPECT_EQ(scaler.current_scale(), 4.0);
  clean_step(scaler);
  clean_step(scaler);
  EXPECT_EQ(scaler.current_scale(), 4.0);  // the two clean steps before the overflow do not count
  clean_step(scaler);
  EXPECT_EQ(scaler.current_scale(), 8.0);
}

TEST(LossScaler, IgnoresParametersWithoutGradients) {
  LossScaler scaler(true, 4.0, 10, at::kCPU);
  auto unused = at::zeros({3}, at::kFloat).requires_grad_();
  auto used = parameter_with_grad({8.0f});
  EXPECT_TRUE(scaler.unscale({unused, used[0]}));
  EXPECT_FALSE(unused.grad().defined());
  EXPECT_FLOAT_EQ(used[0].grad()[0].item<float>(), 2.0f);
}

TEST(LossScaler, RestoresCheckpointedState) {
  LossScaler scaler(true, 8.0, 3, at::kCPU);
  scaler.restore(at::full({1}, 512.0f), at::full({1}, 2, at::kInt));
  EXPECT_EQ(scaler.current_scale(), 512.0);
  clean_step(scaler);  // the third clean step counted from the restored tracker
  EXPECT_EQ(scaler.current_scale(), 1024.0);
}

// Kept scaled (fp16 weights): the check alone, the gradients untouched, the scale handed to the fused step.
TEST(LossScaler, KeptScaledGradientsAreCheckedButNotDivided) {
  LossScaler scaler(true, 1024.0, 3, at::kCPU, /*keep_scaled=*/true);
  auto clean = parameter_with_grad({512.0f, -2048.0f});
  const at::Tensor skip = scaler.unscale_on_device(clean);
  EXPECT_EQ(skip.item<float>(), 0.0f);
  EXPECT_TRUE(at::equal(clean[0].grad(), at::tensor({512.0f, -2048.0f})));
  ASSERT_TRUE(scaler.grad_scale().defined());
  EXPECT_EQ(scaler.grad_scale().item<float>(), 1024.0f);
  auto overflow = parameter_with_grad({1.0f, std::numeric_limits<float>::infinity()});
  EXPECT_EQ(scaler.unscale_on_device(overflow).item<float>(), 1.0f);
  scaler.update();
  EXPECT_EQ(scaler.grad_scale().item<float>(), 512.0f);
  EXPECT_THROW(scaler.unscale(clean), Error);  // a host-side unscale would divide fp16 gradients in place
  LossScaler unscaling(true, 1024.0, 3, at::kCPU);
  EXPECT_FALSE(unscaling.grad_scale().defined());
  EXPECT_FALSE(LossScaler(false, 1024.0, 3, at::kCPU, true).grad_scale().defined());
}

// float16 gradients (of fp16 weights) mixed with float32 ones (BatchNorm's): one check over both.
TEST(LossScaler, KeptScaledChecksHalfAndFloatGradientsTogether) {
  LossScaler scaler(true, 1024.0, 3, at::kCPU, true);
  auto half = at::zeros({3}, at::kHalf).requires_grad_();
  half.mutable_grad() = at::tensor({1.0f, 2.0f, 3.0f}).to(at::kHalf);
  auto single = at::zeros({2}).requires_grad_();
  single.mutable_grad() = at::tensor({4.0f, 5.0f});
  EXPECT_EQ(scaler.unscale_on_device({half, single}).item<float>(), 0.0f);
  EXPECT_TRUE(at::equal(half.grad(), at::tensor({1.0f, 2.0f, 3.0f}).to(at::kHalf)));
  half.mutable_grad()[1] = INFINITY;
  EXPECT_EQ(scaler.unscale_on_device({half, single}).item<float>(), 1.0f);
}

}  // namespace
}  // namespace ft
