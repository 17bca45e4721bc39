// The CUDA entry points of kernels/ in a build without CUDA: each one refuses with the error that names it and
// the setting that keeps a run on the CPU, instead of doing nothing or returning garbage.
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "kernels/augment.h"
#include "kernels/common.h"
#include "kernels/conv_relu.h"
#include "kernels/max_pool.h"
#include "kernels/pool_norm_gelu.h"
#include "kernels/rgb_to_gray.h"
#include "kernels/stall.h"
#include "runtime/error.h"

namespace ft {
namespace {

TEST(CudaEntryPoints, EachRefusesByNameInABuildWithoutCuda) {
  if (cuda_kernels_built()) GTEST_SKIP() << "this build has CUDA";
  const AugmentParams augment{};
  const ConvGeometry conv{};
  const PoolNormShape shape{};
  const MaxPoolShape pool{};
  const std::vector<std::pair<std::string, std::function<void()>>> entry_points = {
      {"augment_batch_device", [&] { augment_batch_device(nullptr, nullptr, 1, 0, augment, nullptr, nullptr, nullptr); }},
      {"conv_bias_relu_device", [&] { conv_bias_relu_device(nullptr, nullptr, nullptr, nullptr, conv, nullptr); }},
      {"stall_stream_device", [] { stall_stream_device(0.001, nullptr); }},
      {"max_pool2_forward_device",
       [&] { max_pool2_forward_device(MapType::f32, nullptr, nullptr, nullptr, pool, nullptr); }},
      {"max_pool2_backward_device",
       [&] { max_pool2_backward_device(MapType::f32, nullptr, nullptr, nullptr, pool, nullptr); }},
      {"pool_norm_workspace", [&] { pool_norm_workspace(shape); }},
      {"pool_norm_gelu_forward_device",
       [&] { pool_norm_gelu_forward_device(MapType::f32, {}, nullptr, shape, NormSettings{}, nullptr); }},
      {"pool_norm_gelu_backward_device",
       [&] { pool_norm_gelu_backward_device(MapType::f32, {}, nullptr, shape, true, nullptr); }},
      {"rgb_to_gray_device", [] { rgb_to_gray_device(nullptr, nullptr, 1, nullptr); }},
      {"rgb_to_gray_staged", [] { rgb_to_gray_staged(nullptr, nullptr, 1); }},
  };
  for (const auto& [name, call] : entry_points) {
    try {
      call();
      ADD_FAILURE() << name << " returned in a build without CUDA";
    } catch (const Error& e) {
      const std::string text = e.what();
      EXPECT_EQ(text.rfind(name + ": this fusetrain was built without CUDA", 0), 0u) << text;
      EXPECT_NE(text.find("train.device: cpu"), std::string::npos) << text;
    }
  }
}

}  // namespace
}  // namespace ft
