// Builds the configured torch::optim optimizer (SGD with momentum/Nesterov, Adam, AdamW, RMSprop)
// and sets its learning rate each step from the scheduler.
#pragma once

#include <torch/optim/optimizer.h>

#include <memory>
#include <vector>

#include "config/schema.h"

namespace ft {

std::unique_ptr<torch::optim::Optimizer> make_optimizer(const OptimizerConfig& config,
                                                        const std::vector<at::Tensor>& parameters);
void set_learning_rate(torch::optim::Optimizer& optimizer, double lr);

}  // namespace ft
