// The augmentation kernel on the GPU against its CPU rule: the same batches (crop, flip, cutout,
// normalisation; alternate flips) from a CUDA and a CPU copy of one split. Skipped without a GPU.
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
      const auto [x_gpu, y_gpu] = gpu.batch(rows.to(at::kCUDA), params, 1000, at::kFloat, false);
      ASSERT_TRUE(x_gpu.is_cuda());
      // Normalisation may contract to a fused multiply-add on the GPU: the last bit can differ.
      EXPECT_TRUE(at::allclose(x_cpu, x_gpu.cpu(), 0, 1e-5)) << "alternate " << alternate << " epoch " << epoch;
      EXPECT_TRUE(at::equal(y_cpu, y_gpu.cpu()));
    }
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
