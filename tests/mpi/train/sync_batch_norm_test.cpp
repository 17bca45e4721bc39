// model.sync_batchnorm: one step of N ranks x b images through synchronised BatchNorm layers equals one step of
// one rank with all N x b images through plain at::batch_norm, computed here: outputs, input gradients,
// parameter gradients after the engine's all-reduce and running statistics, in fp64 to 1e-10.
#include <gtest/gtest.h>
#include <torch/nn/modules/conv.h>

#include "comm/backend.h"
#include "engine/engine.h"
#include "host_backends.h"
#include "models/sync_batch_norm.h"
#include "runtime/error.h"
#include "train/batch_norm_sync.h"
#include "train/trainer.h"
#include "train_fixture.h"

namespace ft::test {
namespace {

constexpr std::int64_t kImages = 3, kChannels = 4, kSide = 5, kMid = 6;
constexpr double kMomentum = 0.1, kEps = 1e-5;

// BatchNorm2d -> conv 3x3 -> BatchNorm2d -> mean over the image -> BatchNorm1d: the second and third layers see
// inputs that depend on every image of the rank, so their input gradients test the backward reductions.
struct Layers : torch::nn::Module {
  Layers()
      : a(register_module("a", SyncBatchNorm2d(kChannels))),
        conv(register_module("conv", torch::nn::Conv2d(torch::nn::Conv2dOptions(kChannels, kMid, 3).padding(1)))),
        b(register_module("b", SyncBatchNorm2d(kMid))),
        c(register_module("c", SyncBatchNorm1d(kMid))) {}
  at::Tensor forward(const at::Tensor& x) { return c->forward(b->forward(conv->forward(a->forward(x))).mean({2, 3})); }
  SyncBatchNorm2d a;
  torch::nn::Conv2d conv;
  SyncBatchNorm2d b;
  SyncBatchNorm1d c;
};

// The same network in plain functional form over the whole batch, from the same starting tensors.
struct Reference {
  explicit Reference(Layers& net) {
    for (const auto& p : net.named_parameters()) params[p.key()] = p.value().detach().clone().requires_grad_(true);
    for (const auto& b : net.named_buffers()) buffers[b.key()] = b.value().detach().clone();
  }
  at::Tensor norm(const at::Tensor& x, const std::string& name) {
    return at::batch_norm(x, params[name + ".weight"], params[name + ".bias"], buffers[name + ".running_mean"],
                          buffers[name + ".running_var"], /*training=*/true, kMomentum, kEps, /*cudnn=*/false);
  }
  at::Tensor forward(const at::Tensor& x) {
    const at::Tensor h = at::conv2d(norm(x, "a"), params["conv.weight"], params["conv.bias"], 1, 1);
    return norm(norm(h, "b").mean({2, 3}), "c");
  }
  std::map<std::string, at::Tensor> params, buffers;
};

double largest_difference(const at::Tensor& a, const at::Tensor& b) {
  return (a.to(at::kDouble) - b.to(at::kDouble)).abs().max().item<double>();
}

struct Figures {
  double output = 0, input_grad = 0, param_grad = 0, buffers = 0;
};

// One step on this rank's slice with the layers synchronised over `norms` (or not, when null), against the
// reference step over all images.
Figures step_against_reference(const World& world, Backend& gradients, Backend* norms) {
  const int n = world.size(), r = world.rank();
  at::manual_seed(7);  // the same network, images and loss weights on every rank
  Layers net;
  net.to(at::kDouble);
  {
    at::NoGradGuard no_grad;
    for (auto& p : net.parameters()) p.uniform_(0.5, 1.5);  // BatchNorm's scale and shift away from 1 and 0
  }
  const at::Tensor x_all = at::randn({n * kImages, kChannels, kSide, kSide}, at::kDouble) * 2 + 0.5;
  const at::Tensor weights_all = at::randn({n * kImages, kMid}, at::kDouble);
  Reference reference(net);
  if (norms) synchronize_batch_norms(net, std::make_shared<BackendNormSync>(*norms));

  std::vector<NamedTensor> named;
  for (const auto& p : net.named_parameters()) named.push_back({p.key(), p.value()});
  GradientEngineOptions options;
  options.average = false;  // the loss carries 1/world, as in training
  GradientEngine engine(gradients, world, named, options);
  const double share = 1.0 / static_cast<double>(n * kImages);  // the mean over all ranks' images
  const at::Tensor x = x_all.narrow(0, r * kImages, kImages).clone().requires_grad_(true);
  engine.prepare(true);
  const at::Tensor out = net.forward(x);
  (out * weights_all.narrow(0, r * kImages, kImages)).sum().mul(share).backward();
  engine.finish();

  const at::Tensor x_ref = x_all.clone().requires_grad_(true);
  const at::Tensor out_ref = reference.forward(x_ref);
  (out_ref * weights_all).sum().mul(share).backward();

  Figures f;
  f.output = largest_difference(out, out_ref.narrow(0, r * kImages, kImages));
  f.input_grad = largest_difference(x.grad(), x_ref.grad().narrow(0, r * kImages, kImages));
  for (const auto& p : net.named_parameters())
    f.param_grad = std::max(f.param_grad, largest_difference(p.value().grad(), reference.params[p.key()].grad()));
  for (const auto& b : net.named_buffers()) {
    if (b.key().find("num_batches_tracked") != std::string::npos) {  // at::batch_norm counts no batches
      EXPECT_EQ(b.value().item<double>(), 1) << b.key();
      continue;
    }
    f.buffers = std::max(f.buffers, largest_difference(b.value(), reference.buffers[b.key()]));
  }
  return f;
}

TEST(SyncBatchNorm, StepOfEveryRankEqualsOneRankWithAllImages) {
  const World& world = ft::test::world();
  if (world.size() == 1) GTEST_SKIP() << "needs several ranks";
  auto gradients = make_backend(world, BackendOptions{});
  for (const std::string& kind : host_backends()) {
    BackendOptions options;
    options.name = choice_from<BackendName>("backend", kind);
    auto norms = make_backend(world, options);
    const Figures f = step_against_reference(world, *gradients, norms.get());
    if (world.rank() == 0)
      std::printf("%d ranks, %s: largest differences: output %.1e, input gradient %.1e, parameter gradient %.1e, "
                  "running statistics %.1e\n", world.size(), kind.c_str(), f.output, f.input_grad, f.param_grad,
                  f.buffers);
    EXPECT_LT(f.output, 1e-10) << kind << ": forward outputs";
    EXPECT_LT(f.input_grad, 1e-10) << kind << ": input gradients";
    EXPECT_LT(f.param_grad, 1e-10) << kind << ": parameter gradients after the all-reduce";
    EXPECT_LT(f.buffers, 1e-10) << kind << ": running statistics";
  }
}

// The comparison can tell: each rank's own statistics miss it by far more than the tolerance.
TEST(SyncBatchNorm, UnsynchronisedLayersMissTheReference) {
  const World& world = ft::test::world();
  if (world.size() == 1) GTEST_SKIP() << "needs several ranks";
  auto gradients = make_backend(world, BackendOptions{});
  const Figures f = step_against_reference(world, *gradients, nullptr);
  EXPECT_GT(f.output, 1e-3);
  EXPECT_GT(f.input_grad, 1e-6);
  EXPECT_GT(f.param_grad, 1e-6);
  EXPECT_GT(f.buffers, 1e-3);
}

// Through training: replicas keep the same BatchNorm buffers without the average before evaluation, and the
// replica check compares them every step.
TEST(SyncBatchNorm, TrainingKeepsEveryReplicasStatisticsEqual) {
  const World& world = ft::test::world();
  Config c = small_config(synthetic_shards("sync_batchnorm", 96, 2), "mpi");
  c.data.shuffle = Shuffle::local;  // each replica normalises its own images: statistics would differ by rank
  c.data.batch_size = 4;
  LayerSpec bn;
  bn.type = LayerType::bn;
  c.model.layers.insert(c.model.layers.begin() + 1, bn);
  c.model.sync_batchnorm = true;
  c.distributed.verify_replicas = 1;
  auto backend = make_backend(world, BackendOptions{});
  Trainer trainer(c, world, *backend, at::Device(at::kCPU));
  trainer.run();
  int tensors = 0;
  for (const auto& b : batch_norm_buffers(*trainer.network())) {
    ++tensors;
    const auto all = world.allgather(bytes_of(b));
    for (int r = 1; r < world.size(); ++r) EXPECT_EQ(all[r], all[0]) << "rank " << r << " keeps its own statistics";
  }
  EXPECT_EQ(tensors, 3) << "running mean, variance and count of the one BatchNorm layer";
}

TEST(SyncBatchNorm, RefusedWithCudaGraphsOnSeveralRanks) {
  const World& world = ft::test::world();
  if (world.size() == 1) GTEST_SKIP() << "refused on several ranks only";
  Config c = small_config(synthetic_shards("sync_batchnorm_graphs", 32, 1), "mpi");
  LayerSpec bn;
  bn.type = LayerType::bn;
  c.model.layers.insert(c.model.layers.begin() + 1, bn);
  c.model.sync_batchnorm = true;
  c.train.cuda_graphs = true;
  auto backend = make_backend(world, BackendOptions{});
  try {
    Trainer(c, world, *backend, at::Device(at::kCPU)).run();
    FAIL() << "train.cuda_graphs with model.sync_batchnorm was not refused";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("model.sync_batchnorm cannot be used with train.cuda_graphs on"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace ft::test
