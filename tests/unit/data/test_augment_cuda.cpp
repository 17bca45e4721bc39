// Batch layouts and devices: the GPU kernel against the CPU rule (crop, flip, cutout, normalisation, alternate
// flips, NCHW and channels_last; skipped without a GPU) and the CPU's own channels_last batches.
#include <gtest/gtest.h>

#include <ATen/Context.h>

#include "data/dataset.h"

namespace ft {
namespace {

HostSplit split_of(int n) {
  HostSplit s;
  s.meta.dataset = "pattern";
  s.meta.class_names = {"a", "b"};
  s.meta.height = 9;
  s.meta.width = 7;
  s.meta.channels = 3;
  s.meta.mean = {0.4, 0.5, 0.6};
  s.meta.std = {0.2, 0.25, 0.3};
  s.meta.count = n;
  s.total = n;
  s.images.resize(static_cast<std::size_t>(n) * 9 * 7 * 3);
  for (std::size_t i = 0; i < s.images.size(); ++i) s.images[i] = static_cast<std::uint8_t>((i * 53 + 7) % 256);
  for (int i = 0; i < n; ++i) s.labels.push_back(i % 2);
  return s;
}

TEST(AugmentCuda, KernelMatchesTheCpuRule) {
  if (!at::hasCUDA()) GTEST_SKIP() << "no CUDA device";
  const HostSplit split = split_of(40);
  const DeviceDataset cpu(split, at::Device(at::kCPU)), gpu(split, at::Device(at::kCUDA, 0));
  const auto rows = at::arange(39, -1, -3, at::TensorOptions().dtype(at::kLong));
  for (const bool alternate : {false, true}) {
    for (const int epoch : {1, 2}) {
      auto params = cpu.augment_params(2, true, 3, true);
      params.alternate_flip = alternate;
      params.image_seed = 17;
      params.epoch = epoch;
      const auto [x_cpu, y_cpu] = cpu.batch(rows, params, 1000, at::kFloat, false);
      for (const bool channels_last : {false, true}) {
        const auto [x_gpu, y_gpu] = gpu.batch(rows.to(at::kCUDA), params, 1000, at::kFloat, channels_last);
        ASSERT_TRUE(x_gpu.is_cuda());
        EXPECT_EQ(x_gpu.is_contiguous(at::MemoryFormat::ChannelsLast), channels_last);
        // Normalisation may contract to a fused multiply-add on the GPU: the last bit can differ.
        EXPECT_TRUE(at::allclose(x_cpu, x_gpu.cpu(), 0, 1e-5)) << "alternate " << alternate << " epoch " << epoch;
        EXPECT_TRUE(at::equal(y_cpu, y_gpu.cpu()));
      }
    }
  }
}

// On the CPU too the kernel writes channels_last batches directly, with the values of the NCHW batch.
TEST(AugmentCuda, CpuChannelsLastBatchesAreWrittenDirectly) {
  const HostSplit split = split_of(12);
  const DeviceDataset cpu(split, at::Device(at::kCPU));
  const auto rows = at::arange(11, -1, -2, at::TensorOptions().dtype(at::kLong));
  const auto params = cpu.augment_params(2, true, 3, true);
  for (const auto dtype : {at::kFloat, at::kDouble}) {
    const auto nchw = cpu.batch(rows, params, 50, dtype, false).first;
    const auto nhwc = cpu.batch(rows, params, 50, dtype, true).first;
    EXPECT_TRUE(nchw.is_contiguous());
    EXPECT_TRUE(nhwc.is_contiguous(at::MemoryFormat::ChannelsLast));
    EXPECT_TRUE(at::equal(nchw, nhwc));
  }
}

TEST(AugmentCuda, EvaluationBatchesMatchInChannelsLast) {
  if (!at::hasCUDA()) GTEST_SKIP() << "no CUDA device";
  const HostSplit split = split_of(8);
  const DeviceDataset cpu(split, at::Device(at::kCPU)), gpu(split, at::Device(at::kCUDA, 0));
  auto params = cpu.augment_params(0, false, 0, false);
  params.train = false;
  const auto rows = at::arange(8, at::TensorOptions().dtype(at::kLong));
  const auto x_cpu = cpu.batch(rows, params, 0, at::kFloat, true).first;
  const auto x_gpu = gpu.batch(rows, params, 0, at::kFloat, true).first;
  EXPECT_TRUE(x_gpu.is_contiguous(at::MemoryFormat::ChannelsLast));
  EXPECT_TRUE(at::allclose(x_cpu, x_gpu.cpu(), 0, 1e-6));
}

}  // namespace
}  // namespace ft
