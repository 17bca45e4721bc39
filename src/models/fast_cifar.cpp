// fast_cifar: the whitening conv and its fit to the training patches, the ConvGroups with identity-initialised
// convolutions and weight-frozen batch norms, and the per-parameter rules airbench's optimizer applies.
#include "models/fast_cifar.h"

#include <ATen/ATen.h>
#include <ATen/core/grad_mode.h>
#include <torch/nn/cloneable.h>
#include <torch/nn/init.h>
#include <torch/nn/modules/conv.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/pimpl.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <tuple>

#include "models/conv_relu_block.h"
#include "models/pool_norm_gelu.h"
#include "models/sync_batch_norm.h"
#include "runtime/error.h"

namespace ft {
namespace {

constexpr std::int64_t kWhitenKernel = 2;
constexpr double kWhitenEps = 5e-4;  // added to each eigenvalue before the 1/sqrt, as in airbench
// airbench's batchnorm_momentum 0.6 is the fraction of the running statistics kept; it passes PyTorch
// momentum = 1 - 0.6, the fraction taken from the batch, which is LibTorch's convention too.
constexpr double kNormMomentum = 1.0 - 0.6;
constexpr double kNormEps = 1e-12;
// Patch values per chunk when accumulating the patch second moment (float64: 32 MiB).
constexpr std::int64_t kChunkElements = std::int64_t{1} << 22;

torch::nn::Conv2d conv3x3(std::int64_t in, std::int64_t out) {
  return torch::nn::Conv2d(torch::nn::Conv2dOptions(in, out, 3).padding(1).bias(false));
}

// airbench's Conv.reset_parameters: after the default (Kaiming-uniform) init, the first `in` filters are
// the identity (torch.nn.init.dirac_(w[:w.size(1)])), an implicit residual path through the network.
void identity_init(const torch::nn::Conv2d& conv) {
  at::NoGradGuard no_grad;
  const at::Tensor& w = conv->weight;
  torch::nn::init::dirac_(w.narrow(0, 0, std::min(w.size(0), w.size(1))));
}

// BatchNorm with a frozen scale of 1 and a trainable shift starting at 0.
SyncBatchNorm2d norm(std::int64_t channels) {
  SyncBatchNorm2d bn(torch::nn::BatchNorm2dOptions(channels).momentum(kNormMomentum).eps(kNormEps));
  bn->weight.requires_grad_(false);
  return bn;
}

// conv3x3 -> maxpool 2x2 -> norm -> GELU -> conv3x3 -> norm -> GELU; each pool -> norm -> GELU (and norm ->
// GELU) as ATen's operations, with the max-pool kernel or as the fused kernels (models/pool_norm_gelu), as
// `kernel` says.
class ConvGroupImpl : public torch::nn::Cloneable<ConvGroupImpl> {
 public:
  ConvGroupImpl(std::int64_t in_channels_, std::int64_t out_channels_, PoolNormGeluKernel kernel_)
      : in_channels(in_channels_), out_channels(out_channels_), kernel(kernel_) {
    reset();
  }

  void reset() override {
    conv1 = register_module("conv1", conv3x3(in_channels, out_channels));
    norm1 = register_module("norm1", norm(out_channels));
    conv2 = register_module("conv2", conv3x3(out_channels, out_channels));
    norm2 = register_module("norm2", norm(out_channels));
    identity_init(conv1);
    identity_init(conv2);
  }

  at::Tensor forward(const at::Tensor& x) {
    const at::Tensor h = pool_norm_gelu(conv1->forward(x), *norm1, 2, kernel);
    return pool_norm_gelu(conv2->forward(h), *norm2, 1, kernel);
  }

  std::int64_t in_channels, out_channels;
  PoolNormGeluKernel kernel;
  torch::nn::Conv2d conv1{nullptr}, conv2{nullptr};
  SyncBatchNorm2d norm1{nullptr}, norm2{nullptr};
};
TORCH_MODULE(ConvGroup);

class FastCifar : public Network {
 public:
  FastCifar(const ModelConfig& config, const InputShape& input)
      : channels_(input.channels), config_(config) {
    FT_REQUIRE(config.conv_relu == ConvReluKernel::aten,
               "model.conv_relu 'fused' needs a conv followed directly by ReLU; fast_cifar has batch norm and "
               "GELU instead, so use 'aten'");
    FT_REQUIRE(config.width >= 1, "model.width must be at least 1, not ", config.width);
    FT_REQUIRE(input.height >= 16 && input.width >= 16, "model.name ", config.name,
               " needs images of at least 16x16 (a 2x2 whitening conv, then three 2x2 max-pools), not ",
               input.channels, "x", input.height, "x", input.width);
    const std::int64_t w = config.width;
    const std::int64_t patch = channels_ * kWhitenKernel * kWhitenKernel;
    // patch filters and their negatives: GELU then passes both signs of each whitened component.
    whiten_ = register_module(
        "whiten", torch::nn::Conv2d(torch::nn::Conv2dOptions(channels_, 2 * patch, kWhitenKernel).bias(true)));
    whiten_->weight.requires_grad_(false);
    const PoolNormGeluKernel kernel = config.pool_norm_gelu;
    group1_ = register_module("group1", ConvGroup(2 * patch, w, kernel));
    group2_ = register_module("group2", ConvGroup(w, 4 * w, kernel));
    group3_ = register_module("group3", ConvGroup(4 * w, 4 * w, kernel));
    fc_ = register_module("fc", torch::nn::Linear(torch::nn::LinearOptions(4 * w, input.classes).bias(false)));
    at::NoGradGuard no_grad;
    if (!config.whiten_bias_uniform) whiten_->bias.zero_();  // else a default conv's uniform start (airbench94_muon)
    if (config.head_unit_std) fc_->weight.div_(fc_->weight.std());
  }

  at::Tensor forward(const at::Tensor& x) override {
    at::Tensor h = at::gelu(whiten_->forward(x));
    h = group3_->forward(group2_->forward(group1_->forward(h)));
    // amax over H, W: adaptive max pool to 1x1 (airbench's MaxPool2d(3) on its 3x3 map)
    return fc_->forward(h.amax({2, 3})) / config_.logit_divisor;
  }

  // airbench's init_whitening_conv: with S the (uncentred) second moment of the flattened 2x2 patches and
  // S = V diag(l) V^T, the filters are the rows of diag(1 / sqrt(l + eps)) V^T, largest eigenvalue first,
  // followed by their negatives; the outputs of the first half then have (nearly) identity second moment.
  void initialize_from_data(const at::Tensor& images) override {
    FT_REQUIRE(images.dim() == 4 && images.size(0) >= 1 && images.size(1) == channels_ &&
                   images.size(2) >= kWhitenKernel && images.size(3) >= kWhitenKernel,
               "fast_cifar: the whitening layer is fitted to images of shape [N, ", channels_,
               ", H, W] with N >= 1 and H, W >= 2, not ", images.sizes());
    const std::int64_t n = images.size(0);
    const std::int64_t dim = channels_ * kWhitenKernel * kWhitenKernel;
    const std::int64_t per_image = (images.size(2) - kWhitenKernel + 1) * (images.size(3) - kWhitenKernel + 1) * dim;
    const std::int64_t chunk = std::max<std::int64_t>(1, kChunkElements / per_image);

    at::NoGradGuard no_grad;
    at::Tensor moment = at::zeros({dim, dim}, images.options().dtype(at::kDouble));
    std::int64_t patches = 0;
    for (std::int64_t start = 0; start < n; start += chunk) {
      const at::Tensor part = images.narrow(0, start, std::min(chunk, n - start)).to(at::kDouble);
      // [n, C*2*2, L]: each column one patch, ordered (channel, row, column) like the conv weight.
      const at::Tensor columns = at::im2col(part, {kWhitenKernel, kWhitenKernel}, {1, 1}, {0, 0}, {1, 1});
      const at::Tensor flat = columns.transpose(1, 2).reshape({-1, dim});
      moment.addmm_(flat.t(), flat);
      patches += flat.size(0);
    }
    moment /= static_cast<double>(patches);

    at::Tensor eigenvalues, eigenvectors;
    std::tie(eigenvalues, eigenvectors) = at::linalg_eigh(moment);  // ascending; eigenvectors in columns
    eigenvalues = eigenvalues.flip(0);
    eigenvectors = eigenvectors.flip(1);
    const at::Tensor filters =
        (eigenvectors.t() / at::sqrt(eigenvalues + kWhitenEps).unsqueeze(1))
            .reshape({dim, channels_, kWhitenKernel, kWhitenKernel});
    whiten_->weight.copy_(at::cat({filters, -filters}));
  }

  std::map<std::string, ParameterRule> parameter_rules() const override {
    std::map<std::string, ParameterRule> rules;
    for (const auto& item : named_parameters()) {
      const std::string& name = item.key();
      const std::string suffix = ".bias";
      const bool is_bias =
          name.size() > suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0;
      if (is_bias && name.find(".norm") != std::string::npos) rules[name].lr_scale = config_.norm_bias_lr_scale;
    }
    rules["whiten.bias"].train_epochs = config_.whiten_bias_epochs;
    rules["whiten.bias"].own_decay = config_.whiten_bias_decay;
    if (config_.head_lr_scale != 1.0) rules["fc.weight"].lr_scale = config_.head_lr_scale;
    return rules;
  }

 private:
  std::int64_t channels_;
  ModelConfig config_;
  torch::nn::Conv2d whiten_{nullptr};
  ConvGroup group1_{nullptr}, group2_{nullptr}, group3_{nullptr};
  torch::nn::Linear fc_{nullptr};
};

}  // namespace

std::shared_ptr<Network> make_fast_cifar(const ModelConfig& config, const InputShape& input) {
  return std::make_shared<FastCifar>(config, input);
}

}  // namespace ft
