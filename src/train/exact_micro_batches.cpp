// Micro-batch bookkeeping of the reproducible step: BatchNorm layers found among the network's modules and
// switched to momentum 1 for a micro-batch (their running buffers then hold its batch statistics exactly),
// rows of the exact sum filled segment by segment, and the sums handed back as gradients and one update.
#include "train/exact_micro_batches.h"

#include <torch/nn/modules/batchnorm.h>

#include "kernels/augment.h"
#include "runtime/error.h"
#include "runtime/world.h"
#include "optim/rank_streams.h"

namespace ft {

// One BatchNorm layer: its buffers, its options (momentum switched per micro-batch), and what the buffers
// held before the micro-batch.
struct ExactMicroBatches::Norm {
  torch::nn::BatchNormOptions* options;
  at::Tensor mean, var, count;
  at::Tensor saved_mean, saved_var, saved_count;
  double momentum = 0.1;
};

ExactMicroBatches::ExactMicroBatches(Network& network, std::vector<at::Tensor> parameters, int rows, int terms,
                                   int rank, int ranks, std::uint64_t seed)
    : parameters_(std::move(parameters)), rank_(rank), ranks_(ranks), terms_(terms), seed_(seed) {
  for (const auto& module : network.modules(/*include_self=*/false)) {
    auto norm = std::make_unique<Norm>();
    torch::nn::BatchNormOptions* options = nullptr;
    if (auto* bn = module->as<torch::nn::BatchNorm2dImpl>()) {
      options = &bn->options, norm->mean = bn->running_mean, norm->var = bn->running_var,
      norm->count = bn->num_batches_tracked;
    } else if (auto* bn1 = module->as<torch::nn::BatchNorm1dImpl>()) {
      options = &bn1->options, norm->mean = bn1->running_mean, norm->var = bn1->running_var,
      norm->count = bn1->num_batches_tracked;
    } else {
      continue;
    }
    FT_REQUIRE(options->track_running_stats() && options->momentum().has_value(), "distributed.reproducible: a "
               "BatchNorm layer without running statistics or with a cumulative average (momentum None)");
    norm->options = options;
    norm->momentum = *options->momentum();
    norms_.push_back(std::move(norm));
  }
  std::vector<std::int64_t> segments;
  for (const auto& p : parameters_) segments.push_back(p.numel());
  for (const auto& n : norms_) segments.push_back(n->mean.numel()), segments.push_back(n->var.numel());
  segments.push_back(1);  // the loss
  const auto options = parameters_.front().options().requires_grad(false);
  sum_ = std::make_unique<ExactSum>(std::move(segments), rows, terms, options);
}

ExactMicroBatches::~ExactMicroBatches() = default;

void ExactMicroBatches::begin_micro_batch(int epoch, std::int64_t step, int a) {
  for (auto& p : parameters_) p.mutable_grad() = at::Tensor();
  const std::int64_t k = std::int64_t{a} * ranks_ + rank_;
  const std::uint64_t stream = mix64(seed_ ^ mix64((static_cast<std::uint64_t>(epoch) << 40) ^
                                                   (static_cast<std::uint64_t>(step) * terms_ + k)));
  seed_rank_streams(stream, 0);
  at::NoGradGuard no_grad;
  for (auto& n : norms_) {
    n->saved_mean = n->mean.clone(), n->saved_var = n->var.clone(), n->saved_count = n->count.clone();
    n->options->momentum(1.0);  // the running buffers become this micro-batch's own statistics
  }
}

void ExactMicroBatches::keep_row(int a, const at::Tensor& loss_sum) {
  at::Tensor row = sum_->row(a);
  std::int64_t offset = 0;
  auto put = [&](const at::Tensor& t, std::int64_t n) {
    if (t.defined()) row.narrow(0, offset, n).copy_(t.reshape(-1));
    else row.narrow(0, offset, n).zero_();  // no gradient this micro-batch
    offset += n;
  };
  for (const auto& p : parameters_) put(p.grad(), p.numel());
  for (const auto& n : norms_) put(n->mean, n->mean.numel()), put(n->var, n->var.numel());
  put(loss_sum.reshape(-1), 1);
}

void ExactMicroBatches::end_micro_batch(int a, const at::Tensor& loss_sum) {
  at::NoGradGuard no_grad;
  keep_row(a, loss_sum);
  for (auto& n : norms_) {
    n->mean.copy_(n->saved_mean), n->var.copy_(n->saved_var), n->count.copy_(n->saved_count);
    n->options->momentum(n->momentum);
  }
}

at::Tensor ExactMicroBatches::finish(const World& world) {
  const at::Tensor total = sum_->sum(world);
  at::NoGradGuard no_grad;
  std::int64_t offset = 0;
  auto take = [&](std::int64_t n) {
    at::Tensor part = total.narrow(0, offset, n);
    offset += n;
    return part;
  };
  for (auto& p : parameters_) p.mutable_grad() = take(p.numel()).view(p.sizes()).to(p.scalar_type());
  for (auto& n : norms_) {
    for (at::Tensor* buffer : {&n->mean, &n->var}) {
      const at::Tensor mean_of_micro_batches = take(buffer->numel()).view(buffer->sizes()) / terms_;
      buffer->copy_(buffer->to(at::kDouble) * (1 - n->momentum) + mean_of_micro_batches * n->momentum);
    }
    n->count.add_(1);
  }
  return take(1).clone();
}

}  // namespace ft
