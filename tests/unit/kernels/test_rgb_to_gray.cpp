// Tests of the RGB -> gray conversion: the CPU reference against round(0.299 R + 0.587 G + 0.114 B)
// for every RGB triple, and the CUDA kernel against the CPU bit for bit when a GPU is present.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "kernels/rgb_to_gray.h"
#include "runtime/error.h"

namespace ft {
namespace {

// All 2^24 RGB triples, as interleaved pixels.
std::vector<std::uint8_t> every_rgb_triple() {
  std::vector<std::uint8_t> rgb(std::size_t{3} << 24);
  for (std::size_t i = 0; i < (std::size_t{1} << 24); ++i) {
    rgb[3 * i] = static_cast<std::uint8_t>(i >> 16);
    rgb[3 * i + 1] = static_cast<std::uint8_t>(i >> 8);
    rgb[3 * i + 2] = static_cast<std::uint8_t>(i);
  }
  return rgb;
}

TEST(RgbToGray, CpuMatchesTheBt601FormulaForEveryTriple) {
  const auto rgb = every_rgb_triple();
  std::vector<std::uint8_t> gray(rgb.size() / 3);
  rgb_to_gray_cpu(rgb.data(), gray.data(), gray.size());
  std::size_t mismatches = 0;
  for (std::size_t i = 0; i < gray.size(); ++i) {
    // The weighted sum in thousandths is an exact integer; halves round up.
    const double weighted = (299.0 * rgb[3 * i] + 587.0 * rgb[3 * i + 1] + 114.0 * rgb[3 * i + 2]) / 1000.0;
    mismatches += gray[i] != static_cast<std::uint8_t>(std::floor(weighted + 0.5));
  }
  EXPECT_EQ(mismatches, 0u);
  EXPECT_EQ(gray[0], 0);
  EXPECT_EQ(gray.back(), 255);
}

TEST(RgbToGray, KnownValues) {
  const std::uint8_t rgb[] = {255, 0, 0, 0, 255, 0, 0, 0, 255, 128, 128, 128, 10, 20, 30};
  std::uint8_t gray[5];
  rgb_to_gray_cpu(rgb, gray, 5);
  EXPECT_EQ(gray[0], 76);   // 76.245
  EXPECT_EQ(gray[1], 150);  // 149.685
  EXPECT_EQ(gray[2], 29);   // 29.07
  EXPECT_EQ(gray[3], 128);
  EXPECT_EQ(gray[4], 18);  // 18.15
}

TEST(RgbToGray, CudaIsBitIdenticalToCpu) {
  if (!cuda_kernels_available()) GTEST_SKIP() << "no CUDA build or no visible GPU";
  const auto rgb = every_rgb_triple();
  std::vector<std::uint8_t> cpu(rgb.size() / 3), gpu(rgb.size() / 3, 1);
  rgb_to_gray_cpu(rgb.data(), cpu.data(), cpu.size());
  rgb_to_gray_staged(rgb.data(), gpu.data(), gpu.size());
  EXPECT_EQ(cpu, gpu);
}

TEST(RgbToGray, WithoutAGpuTheCudaLauncherThrows) {
  if (cuda_kernels_available()) GTEST_SKIP() << "a GPU is available";
  // Either "built without CUDA" or the CUDA runtime's own error, as ft::Error in both cases.
  std::uint8_t rgb[3] = {1, 2, 3}, gray[1];
  EXPECT_THROW(rgb_to_gray_staged(rgb, gray, 1), Error);
}

TEST(RgbToGray, BuildsWithoutCudaNameTheSettingThatAvoidsTheGpu) {
  if (cuda_kernels_built()) GTEST_SKIP() << "this build has CUDA";
  std::uint8_t rgb[3] = {1, 2, 3}, gray[1];
  try {
    rgb_to_gray_staged(rgb, gray, 1);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("train.device: cpu"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace ft
