// The synchronised BatchNorm layers with stand-in sums, no MPI: over one rank they are LibTorch's BatchNorm (forward,
// gradients, running statistics, eval mode), over k identical ranks BatchNorm of the batch repeated k times; their
// parameter and buffer names are BatchNorm's. On the CPU, and on a GPU where there is one.
#include <gtest/gtest.h>
#include <torch/cuda.h>
#include <torch/nn/modules/batchnorm.h>
#include <torch/nn/modules/container/modulelist.h>
#include <torch/nn/modules/linear.h>

#include "models/sync_batch_norm.h"

namespace ft {
namespace {

// The sums of k identical ranks: k times this rank's figures.
class IdenticalRanks final : public NormSync {
 public:
  explicit IdenticalRanks(int k) : k_(k) {}
  void allreduce(at::Tensor& t, const char*) override {
    t.mul_(k_);
    ++calls;
  }
  int calls = 0;

 private:
  int k_;
};

std::vector<at::Device> devices() {
  std::vector<at::Device> out{at::kCPU};
  if (torch::cuda::is_available()) out.emplace_back(at::kCUDA, 0);
  return out;
}

double difference(const at::Tensor& a, const at::Tensor& b) {
  return (a.to(at::kCPU, at::kDouble) - b.to(at::kCPU, at::kDouble)).abs().max().item<double>();
}

TEST(SyncBatchNormLayer, KeepsBatchNormsNamesAndType) {
  SyncBatchNorm2d synced(6);
  torch::nn::BatchNorm2d plain(6);
  std::vector<std::string> a, b;
  for (const auto& p : synced->named_parameters()) a.push_back(p.key());
  for (const auto& p : synced->named_buffers()) a.push_back(p.key());
  for (const auto& p : plain->named_parameters()) b.push_back(p.key());
  for (const auto& p : plain->named_buffers()) b.push_back(p.key());
  EXPECT_EQ(a, b);
  EXPECT_NE(synced->as<torch::nn::BatchNorm2dImpl>(), nullptr);
  EXPECT_EQ(batch_norm_buffers(*synced.ptr()).size(), 0u) << "the layers of a module, not the module itself";
}

// The buffers kept in step across ranks: each batch norm's running mean, running variance and batch count, in
// module order, for 2-D and 1-D layers; a layer that tracks no running statistics has none to give.
TEST(SyncBatchNormLayer, BuffersAreTheRunningStatisticsOfEveryTrackingLayer) {
  torch::nn::ModuleList net(SyncBatchNorm2d(4), torch::nn::Linear(2, 2),
                            torch::nn::BatchNorm1d(torch::nn::BatchNorm1dOptions(3).track_running_stats(false)),
                            torch::nn::BatchNorm1d(5));
  std::vector<at::Tensor> expected;
  for (const std::size_t index : {0u, 3u}) {
    for (const auto& b : net[index]->named_buffers()) expected.push_back(b.value());
  }
  ASSERT_EQ(expected.size(), 6u);
  const auto got = batch_norm_buffers(*net.ptr());
  ASSERT_EQ(got.size(), expected.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    EXPECT_TRUE(got[i].defined()) << i;
    EXPECT_TRUE(got[i].is_same(expected[i])) << i << ": not the layer's own buffer, or out of order";
  }
}

// Two training steps and an eval forward of `k` identical ranks against LibTorch's BatchNorm over the batch
// repeated k times, in `dtype` on `device`, the input in `format`.
void check_against_plain(int k, at::Device device, at::ScalarType dtype, at::MemoryFormat format, double tolerance) {
  at::manual_seed(3);
  SyncBatchNorm2d synced(5);
  torch::nn::BatchNorm2d plain(5);
  synced->to(device, dtype);
  plain->to(device, dtype);
  {
    at::NoGradGuard no_grad;
    synced->weight.uniform_(0.5, 1.5), synced->bias.uniform_(-0.5, 0.5);
    plain->weight.copy_(synced->weight), plain->bias.copy_(synced->bias);
  }
  auto sums = std::make_shared<IdenticalRanks>(k);
  synced->synchronize_with(sums);
  const auto options = at::TensorOptions().device(device).dtype(dtype);
  for (int step = 0; step < 2; ++step) {
    const at::Tensor x = (at::randn({3, 5, 4, 6}, options) * 3 + 1).contiguous(format).requires_grad_(true);
    const at::Tensor g = at::randn({3, 5, 4, 6}, options);
    const at::Tensor y = synced->forward(x);
    (y * g).sum().backward();
    std::vector<at::Tensor> copies;
    for (int r = 0; r < k; ++r) copies.push_back(x.detach().clone().requires_grad_(true));
    const at::Tensor y_all = plain->forward(at::cat(copies));
    (y_all * g.repeat({k, 1, 1, 1})).sum().backward();
    EXPECT_LT(difference(y, y_all.narrow(0, 0, 3)), tolerance) << "output, step " << step;
    EXPECT_LT(difference(x.grad(), copies[0].grad()), tolerance) << "input gradient, step " << step;
    // Parameter gradients: this rank's share; identical ranks together make the whole batch's.
    EXPECT_LT(difference(synced->weight.grad() * k, plain->weight.grad()), tolerance * k) << "weight, step " << step;
    EXPECT_LT(difference(synced->bias.grad() * k, plain->bias.grad()), tolerance * k) << "bias, step " << step;
    synced->weight.mutable_grad() = at::Tensor(), synced->bias.mutable_grad() = at::Tensor();
    plain->weight.mutable_grad() = at::Tensor(), plain->bias.mutable_grad() = at::Tensor();
    EXPECT_EQ(y.suggest_memory_format(), format) << "the input's memory format is kept";
  }
  EXPECT_EQ(sums->calls, 4) << "one sum in forward and one in backward per step";
  EXPECT_LT(difference(synced->running_mean, plain->running_mean), tolerance);
  EXPECT_LT(difference(synced->running_var, plain->running_var), tolerance) << "unbiased over all k x 72 values";
  EXPECT_EQ(synced->num_batches_tracked.item<std::int64_t>(), 2);
  synced->eval();
  plain->eval();
  const at::Tensor x = at::randn({2, 5, 4, 6}, options);
  EXPECT_LT(difference(synced->forward(x), plain->forward(x)), tolerance) << "eval mode: the running statistics";
  EXPECT_EQ(sums->calls, 4) << "eval mode sums nothing";
}

TEST(SyncBatchNormLayer, OneRankIsLibTorchsBatchNorm) {
  for (const at::Device device : devices()) {
    SCOPED_TRACE(device.str());
    check_against_plain(1, device, at::kDouble, at::MemoryFormat::Contiguous, 1e-12);
    check_against_plain(1, device, at::kFloat, at::MemoryFormat::ChannelsLast, 1e-4);
  }
}

TEST(SyncBatchNormLayer, IdenticalRanksNormaliseTheRepeatedBatch) {
  for (const at::Device device : devices()) {
    SCOPED_TRACE(device.str());
    check_against_plain(3, device, at::kDouble, at::MemoryFormat::Contiguous, 1e-12);
    check_against_plain(4, device, at::kFloat, at::MemoryFormat::ChannelsLast, 1e-4);
  }
}

TEST(SyncBatchNormLayer, OneDimensionalLayerWithoutAffineParameters) {
  SyncBatchNorm1d synced(torch::nn::BatchNormOptions(7).affine(false).momentum(std::nullopt));
  torch::nn::BatchNorm1d plain(torch::nn::BatchNormOptions(7).affine(false).momentum(std::nullopt));
  synced->to(at::kDouble);
  plain->to(at::kDouble);
  synced->synchronize_with(std::make_shared<IdenticalRanks>(2));
  for (int step = 0; step < 3; ++step) {  // momentum None: the running statistics average every step's
    const at::Tensor x = at::randn({6, 7}, at::kDouble).requires_grad_(true);
    const at::Tensor x2 = at::cat({x.detach(), x.detach()}).requires_grad_(true);
    synced->forward(x).pow(2).sum().backward();
    plain->forward(x2).pow(2).sum().backward();
    EXPECT_LT(difference(x.grad(), x2.grad().narrow(0, 0, 6)), 1e-12) << step;
  }
  EXPECT_LT(difference(synced->running_mean, plain->running_mean), 1e-12);
  EXPECT_LT(difference(synced->running_var, plain->running_var), 1e-12);
}

}  // namespace
}  // namespace ft
