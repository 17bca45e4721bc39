// BatchNorm layers that, once given a communicator, normalise with the statistics of every rank's images of the
// step, as torch.nn.SyncBatchNorm does; without one, or in eval mode, they are LibTorch's BatchNorm, unchanged.
#pragma once

#include <ATen/ATen.h>
#include <torch/nn/modules/batchnorm.h>
#include <torch/nn/pimpl.h>

#include <memory>
#include <vector>

namespace ft {

// Sums BatchNorm's per-channel figures over the ranks: called on the training thread (forward) and autograd's
// (backward), in the same order on every rank. Training's is a backend of its own (train/batch_norm_sync.h);
// tests give stand-ins.
class NormSync {
 public:
  virtual ~NormSync() = default;
  // In place, a contiguous float32 or float64 tensor on the CPU or a GPU: the element-wise sum over all ranks;
  // `what` names the collective (stall messages).
  virtual void allreduce(at::Tensor& t, const char* what) = 0;
};

// The buffers and settings of one BatchNorm layer, as the synchronised forward needs them.
struct NormLayer {
  const torch::nn::BatchNormOptions& options;
  at::Tensor weight, bias, running_mean, running_var, num_batches_tracked;
};

// Training forward over all ranks: one all-reduce of the per-channel sums, squared sums and count; the running
// statistics take the global mean and unbiased global variance; backward all-reduces the per-channel sums of
// dy and dy * (x - mean), so the input gradient is the full batch's. Parameter gradients stay this rank's own.
at::Tensor sync_batch_norm(const at::Tensor& x, const NormLayer& layer, NormSync& sync);

// What a synchronisable layer adds to LibTorch's: the communicator it normalises over, or none.
class SyncedNorm {
 public:
  virtual ~SyncedNorm() = default;
  void synchronize_with(std::shared_ptr<NormSync> sync) { sync_ = std::move(sync); }
  bool synchronized() const { return sync_ != nullptr; }

 protected:
  std::shared_ptr<NormSync> sync_;
};

// LibTorch's BatchNorm{1,2}dImpl (same parameters, buffers and state-dict names, found by as<BatchNorm2dImpl>())
// with a forward of its own that the models' typed members call.
template <typename Base>
class SyncBatchNormOf : public Base, public SyncedNorm {
 public:
  using Base::Base;
  at::Tensor forward(const at::Tensor& x) {
    if (!sync_ || !this->is_training()) return Base::forward(x);
    this->_check_input_dim(x);
    return sync_batch_norm(x, {this->options, this->weight, this->bias, this->running_mean, this->running_var,
                               this->num_batches_tracked},
                           *sync_);
  }
};

class SyncBatchNorm2dImpl final : public SyncBatchNormOf<torch::nn::BatchNorm2dImpl> {
 public:
  using SyncBatchNormOf<torch::nn::BatchNorm2dImpl>::SyncBatchNormOf;
};
TORCH_MODULE(SyncBatchNorm2d);

class SyncBatchNorm1dImpl final : public SyncBatchNormOf<torch::nn::BatchNorm1dImpl> {
 public:
  using SyncBatchNormOf<torch::nn::BatchNorm1dImpl>::SyncBatchNormOf;
};
TORCH_MODULE(SyncBatchNorm1d);

// Every synchronisable BatchNorm layer of `module` normalises over the ranks of `sync` from now on (nullptr: over
// its own images again); returns how many layers there are.
int synchronize_batch_norms(torch::nn::Module& module, const std::shared_ptr<NormSync>& sync);

// The running statistics of every BatchNorm layer of `module` (mean, variance, batches tracked), in module order.
std::vector<at::Tensor> batch_norm_buffers(torch::nn::Module& module);

}  // namespace ft
