// Mapping from OptimizerConfig to LibTorch's optimizers; every option the config exposes is passed on.
// Weight decay is coupled (L2 in the gradient) except for AdamW, where it is decoupled by definition.
#include "train/optimizer.h"

#include <torch/optim/adam.h>
#include <torch/optim/adamw.h>
#include <torch/optim/rmsprop.h>
#include <torch/optim/sgd.h>

#include "runtime/error.h"

namespace ft {

std::unique_ptr<torch::optim::Optimizer> make_optimizer(const OptimizerConfig& c,
                                                        const std::vector<at::Tensor>& parameters) {
  if (c.name == "sgd") {
    FT_REQUIRE(!c.nesterov || c.momentum > 0, "optimizer.nesterov needs optimizer.momentum > 0");
    return std::make_unique<torch::optim::SGD>(
        parameters, torch::optim::SGDOptions(c.lr).momentum(c.momentum).nesterov(c.nesterov).weight_decay(
                        c.weight_decay));
  }
  if (c.name == "adam")
    return std::make_unique<torch::optim::Adam>(
        parameters,
        torch::optim::AdamOptions(c.lr).betas({c.beta1, c.beta2}).eps(c.eps).weight_decay(c.weight_decay));
  if (c.name == "adamw")
    return std::make_unique<torch::optim::AdamW>(
        parameters,
        torch::optim::AdamWOptions(c.lr).betas({c.beta1, c.beta2}).eps(c.eps).weight_decay(c.weight_decay));
  if (c.name == "rmsprop")
    return std::make_unique<torch::optim::RMSprop>(
        parameters, torch::optim::RMSpropOptions(c.lr).alpha(c.alpha).eps(c.eps).momentum(c.momentum).weight_decay(
                        c.weight_decay));
  throw Error(cat("optimizer.name: unknown optimizer '", c.name, "'"));
}

void set_learning_rate(torch::optim::Optimizer& optimizer, double lr) {
  for (auto& group : optimizer.param_groups()) group.options().set_lr(lr);
}

}  // namespace ft
