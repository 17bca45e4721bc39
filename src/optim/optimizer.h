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
#include "optim/scheduler.h"

namespace ft {

// Parameters that share a learning-rate multiplier and a freezing epoch (see ParameterRule); `orthogonal`:
// Muon's conv filters, whose updates are orthogonalised (optim/muon.h).
struct ParameterGroup {
  std::vector<at::Tensor> parameters;
  ParameterRule rule;
  bool orthogonal = false;
};

// The trainable parameters (requires_grad) of `named`, grouped by the rules that name them; those no
// rule names form the first group. Throws ft::Error when a rule names no trainable parameter.
std::vector<ParameterGroup> group_parameters(const std::vector<std::pair<std::string, at::Tensor>>& named,
                                             const std::map<std::string, ParameterRule>& rules);
// The same for `optimizer`: with muon, the trainable 4-d parameters (conv filters) of each group move to an
// orthogonal group of their own after the others, at muon_lr / lr times the group's rate.
std::vector<ParameterGroup> group_parameters(const std::vector<std::pair<std::string, at::Tensor>>& named,
                                             const std::map<std::string, ParameterRule>& rules,
                                             const OptimizerConfig& optimizer);

// One optimizer parameter group per ParameterGroup, in order; a group's weight decay is divided by its
// lr_scale, so that the decay applied per step (lr x decay) is the same in every group. muon: ft::Muon, its
// orthogonal groups with optimizer.muon_momentum and no weight decay (their norm is reset every step instead).
std::unique_ptr<torch::optim::Optimizer> make_optimizer(const OptimizerConfig& config,
                                                        const std::vector<ParameterGroup>& groups);
std::unique_ptr<torch::optim::Optimizer> make_optimizer(const OptimizerConfig& config,
                                                        const std::vector<at::Tensor>& parameters);

// Sets every group's learning rate to lr x its lr_scale, or to 0 once `epoch` (1-based) is past the
// group's train_epochs; groups are matched with the optimizer's by position.
void set_learning_rate(torch::optim::Optimizer& optimizer, const std::vector<ParameterGroup>& groups, double lr,
                       int epoch);
// The same at optimizer step `step` (0-based) of `schedule`; a group whose rule has own_decay takes instead
// lr_scale x the schedule's base rate x (1 - step / (train_epochs x steps per epoch)), zero from then on.
void set_learning_rate(torch::optim::Optimizer& optimizer, const std::vector<ParameterGroup>& groups,
                       const LearningRateSchedule& schedule, std::int64_t step, int epoch);
void set_learning_rate(torch::optim::Optimizer& optimizer, double lr);

// Calls `update` with every state tensor of the optimizer (SGD momentum, Adam's averages, RMSprop's)
// and its name ("group0.param3.exp_avg"), and stores what it returns in its place (the same tensor for a
// reader). Throws for an optimizer whose state it does not know.
using StateUpdate = std::function<at::Tensor(const std::string& name, const at::Tensor& tensor)>;
void update_optimizer_state(torch::optim::Optimizer& optimizer, const StateUpdate& update);

}  // namespace ft
