// Builds the configured torch::optim optimizer (SGD with momentum/Nesterov, Adam, AdamW, RMSprop)
// and sets its learning rate each step from the scheduler.
#pragma once

#include <torch/optim/optimizer.h>

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "config/schema.h"
#include "models/network.h"

namespace ft {

// Parameters that share a learning-rate multiplier and a freezing epoch (see ParameterRule).
struct ParameterGroup {
  std::vector<at::Tensor> parameters;
  ParameterRule rule;
};

// The trainable parameters (requires_grad) of `named`, grouped by the rules that name them; those no
// rule names form the first group. Throws ft::Error when a rule names no trainable parameter.
std::vector<ParameterGroup> group_parameters(const std::vector<std::pair<std::string, at::Tensor>>& named,
                                             const std::map<std::string, ParameterRule>& rules);

// One optimizer parameter group per ParameterGroup, in order; a group's weight decay is divided by its
// lr_scale, so that the decay applied per step (lr x decay) is the same in every group.
std::unique_ptr<torch::optim::Optimizer> make_optimizer(const OptimizerConfig& config,
                                                        const std::vector<ParameterGroup>& groups);
std::unique_ptr<torch::optim::Optimizer> make_optimizer(const OptimizerConfig& config,
                                                        const std::vector<at::Tensor>& parameters);

// Sets every group's learning rate to lr x its lr_scale, or to 0 once `epoch` (1-based) is past the
// group's train_epochs; groups are matched with the optimizer's by position.
void set_learning_rate(torch::optim::Optimizer& optimizer, const std::vector<ParameterGroup>& groups, double lr,
                       int epoch);
void set_learning_rate(torch::optim::Optimizer& optimizer, double lr);

// Calls `update` with every state tensor of the optimizer (SGD momentum, Adam's averages, RMSprop's)
// and its name ("group0.param3.exp_avg"), and stores what it returns in its place (the same tensor for a
// reader). Throws for an optimizer whose state it does not know.
using StateUpdate = std::function<at::Tensor(const std::string& name, const at::Tensor& tensor)>;
void update_optimizer_state(torch::optim::Optimizer& optimizer, const StateUpdate& update);

}  // namespace ft
