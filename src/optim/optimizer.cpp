// Mapping from OptimizerConfig to LibTorch's optimizers; every option the config exposes is passed on.
// Weight decay is coupled (L2 in the gradient) except for AdamW, where it is decoupled by definition.
#include "optim/optimizer.h"

#include <torch/optim/adam.h>
#include <torch/optim/adamw.h>
#include <torch/optim/rmsprop.h>
#include <torch/optim/sgd.h>

#include <algorithm>
#include <tuple>
#include <utility>

#include "optim/muon.h"
#include "runtime/error.h"

namespace ft {

namespace {

// The options of one parameter group: the configured optimizer with `lr` and `weight_decay`.
std::unique_ptr<torch::optim::OptimizerOptions> group_options(const OptimizerConfig& c, double lr,
                                                              double weight_decay) {
  switch (c.name) {
    case OptimizerName::sgd:
    case OptimizerName::muon:
      FT_REQUIRE(!c.nesterov || c.momentum > 0, "optimizer.nesterov needs optimizer.momentum > 0");
      return std::make_unique<torch::optim::SGDOptions>(
          torch::optim::SGDOptions(lr).momentum(c.momentum).nesterov(c.nesterov).weight_decay(weight_decay));
    case OptimizerName::adam:
      return std::make_unique<torch::optim::AdamOptions>(
          torch::optim::AdamOptions(lr).betas({c.beta1, c.beta2}).eps(c.eps).weight_decay(weight_decay));
    case OptimizerName::adamw:
      return std::make_unique<torch::optim::AdamWOptions>(
          torch::optim::AdamWOptions(lr).betas({c.beta1, c.beta2}).eps(c.eps).weight_decay(weight_decay));
    case OptimizerName::rmsprop:
      return std::make_unique<torch::optim::RMSpropOptions>(torch::optim::RMSpropOptions(lr).alpha(c.alpha).eps(
          c.eps).momentum(c.momentum).weight_decay(weight_decay));
  }
  throw Error(cat("optimizer.name: unknown optimizer '", static_cast<int>(c.name), "'"));
}

template <typename Optimizer, typename Options>
std::unique_ptr<torch::optim::Optimizer> build(std::vector<torch::optim::OptimizerParamGroup> groups,
                                               const torch::optim::OptimizerOptions& defaults) {
  return std::make_unique<Optimizer>(std::move(groups), static_cast<const Options&>(defaults));
}

}  // namespace

std::vector<ParameterGroup> group_parameters(const std::vector<std::pair<std::string, at::Tensor>>& named,
                                             const std::map<std::string, ParameterRule>& rules) {
  std::vector<ParameterGroup> groups(1);
  std::map<std::tuple<double, int, bool>, std::size_t> index;  // (lr_scale, train_epochs, own_decay) -> group
  std::size_t matched = 0;
  for (const auto& [name, tensor] : named) {
    if (!tensor.requires_grad()) continue;
    const auto rule = rules.find(name);
    if (rule == rules.end()) {
      groups[0].parameters.push_back(tensor);
      continue;
    }
    ++matched;
    const auto key = std::make_tuple(rule->second.lr_scale, rule->second.train_epochs, rule->second.own_decay);
    auto [it, added] = index.emplace(key, groups.size());
    if (added) groups.push_back({{}, rule->second});
    groups[it->second].parameters.push_back(tensor);
  }
  FT_CHECK(matched == rules.size(), "the model's parameter rules name ", rules.size(), " parameters but only ",
           matched, " of them are trainable parameters of the model");
  if (groups[0].parameters.empty()) groups.erase(groups.begin());
  return groups;
}

std::vector<ParameterGroup> group_parameters(const std::vector<std::pair<std::string, at::Tensor>>& named,
                                             const std::map<std::string, ParameterRule>& rules,
                                             const OptimizerConfig& optimizer) {
  std::vector<ParameterGroup> groups = group_parameters(named, rules);
  if (optimizer.name != OptimizerName::muon) return groups;
  std::vector<ParameterGroup> filters;
  for (auto& group : groups) {
    ParameterGroup moved{{}, group.rule, true};
    moved.rule.lr_scale *= optimizer.muon_lr / optimizer.lr;
    auto& kept = group.parameters;
    const auto is_filter = [](const at::Tensor& p) { return p.dim() == 4; };
    std::copy_if(kept.begin(), kept.end(), std::back_inserter(moved.parameters), is_filter);
    kept.erase(std::remove_if(kept.begin(), kept.end(), is_filter), kept.end());
    if (!moved.parameters.empty()) filters.push_back(std::move(moved));
  }
  groups.erase(std::remove_if(groups.begin(), groups.end(), [](const auto& g) { return g.parameters.empty(); }),
               groups.end());
  groups.insert(groups.end(), filters.begin(), filters.end());
  return groups;
}

namespace {

// Muon: LibTorch's SGD groups, the orthogonal ones with the filters' momentum and no weight decay.
std::unique_ptr<torch::optim::Optimizer> build_muon(const OptimizerConfig& c, const std::vector<ParameterGroup>& groups,
                                                    std::vector<torch::optim::OptimizerParamGroup> torch_groups) {
  std::vector<bool> orthogonal;
  for (std::size_t i = 0; i < groups.size(); ++i) {
    orthogonal.push_back(groups[i].orthogonal);
    if (!groups[i].orthogonal) continue;
    auto& o = static_cast<torch::optim::SGDOptions&>(torch_groups[i].options());
    o.momentum(c.muon_momentum).weight_decay(0);
  }
  return std::make_unique<Muon>(torch_groups, torch::optim::SGDOptions(c.lr).momentum(c.momentum).nesterov(
                                                  c.nesterov).weight_decay(c.weight_decay),
                                orthogonal, c.muon_ns_steps);
}

}  // namespace

std::unique_ptr<torch::optim::Optimizer> make_optimizer(const OptimizerConfig& c,
                                                        const std::vector<ParameterGroup>& groups) {
  FT_CHECK(!groups.empty(), "the model has no trainable parameters");
  std::vector<torch::optim::OptimizerParamGroup> torch_groups;
  for (const auto& g : groups)
    torch_groups.emplace_back(g.parameters, group_options(c, c.lr * g.rule.lr_scale,
                                                          c.weight_decay / g.rule.lr_scale));
  const auto defaults = group_options(c, c.lr, c.weight_decay);
  using namespace torch::optim;
  switch (c.name) {
    case OptimizerName::muon: return build_muon(c, groups, std::move(torch_groups));
    case OptimizerName::sgd: return build<SGD, SGDOptions>(std::move(torch_groups), *defaults);
    case OptimizerName::adam: return build<Adam, AdamOptions>(std::move(torch_groups), *defaults);
    case OptimizerName::adamw: return build<AdamW, AdamWOptions>(std::move(torch_groups), *defaults);
    case OptimizerName::rmsprop: return build<RMSprop, RMSpropOptions>(std::move(torch_groups), *defaults);
  }
  throw Error(cat("optimizer.name: unknown optimizer '", static_cast<int>(c.name), "'"));
}

std::unique_ptr<torch::optim::Optimizer> make_optimizer(const OptimizerConfig& c,
                                                        const std::vector<at::Tensor>& parameters) {
  return make_optimizer(c, std::vector<ParameterGroup>{{parameters, {}}});
}

void set_learning_rate(torch::optim::Optimizer& optimizer, const std::vector<ParameterGroup>& groups, double lr,
                       int epoch) {
  auto& torch_groups = optimizer.param_groups();
  FT_CHECK(torch_groups.size() == groups.size(), "optimizer has ", torch_groups.size(), " parameter groups, expected ",
           groups.size());
  for (std::size_t i = 0; i < groups.size(); ++i) {
    const ParameterRule& rule = groups[i].rule;
    const bool frozen = rule.train_epochs > 0 && epoch > rule.train_epochs;
    torch_groups[i].options().set_lr(frozen ? 0.0 : lr * rule.lr_scale);
  }
}

void set_learning_rate(torch::optim::Optimizer& optimizer, const std::vector<ParameterGroup>& groups,
                       const LearningRateSchedule& schedule, std::int64_t step, int epoch) {
  set_learning_rate(optimizer, groups, schedule.at(step), epoch);
  for (std::size_t i = 0; i < groups.size(); ++i) {
    const ParameterRule& rule = groups[i].rule;
    if (!rule.own_decay || rule.train_epochs <= 0) continue;
    const double span = static_cast<double>(rule.train_epochs) * static_cast<double>(schedule.steps_per_epoch());
    const double left = std::max(0.0, 1.0 - static_cast<double>(step) / span);
    optimizer.param_groups()[i].options().set_lr(schedule.base() * rule.lr_scale * left);
  }
}

void set_learning_rate(torch::optim::Optimizer& optimizer, double lr) {
  for (auto& group : optimizer.param_groups()) group.options().set_lr(lr);
}

namespace {

// One parameter's state: every tensor of it through `update` (undefined ones, e.g. AMSGrad's maximum when
// off, are left alone).
void update_param_state(torch::optim::OptimizerParamState* state, const std::string& at, const StateUpdate& update) {
  auto field = [&](const char* name, const at::Tensor& t) { return t.defined() ? update(at + name, t) : t; };
  if (auto* sgd = dynamic_cast<torch::optim::SGDParamState*>(state)) {
    sgd->momentum_buffer(field("momentum_buffer", sgd->momentum_buffer()));
  } else if (auto* adam = dynamic_cast<torch::optim::AdamParamState*>(state)) {
    adam->exp_avg(field("exp_avg", adam->exp_avg()));
    adam->exp_avg_sq(field("exp_avg_sq", adam->exp_avg_sq()));
    adam->max_exp_avg_sq(field("max_exp_avg_sq", adam->max_exp_avg_sq()));
  } else if (auto* adamw = dynamic_cast<torch::optim::AdamWParamState*>(state)) {
    adamw->exp_avg(field("exp_avg", adamw->exp_avg()));
    adamw->exp_avg_sq(field("exp_avg_sq", adamw->exp_avg_sq()));
    adamw->max_exp_avg_sq(field("max_exp_avg_sq", adamw->max_exp_avg_sq()));
  } else if (auto* rms = dynamic_cast<torch::optim::RMSpropParamState*>(state)) {
    rms->square_avg(field("square_avg", rms->square_avg()));
    rms->momentum_buffer(field("momentum_buffer", rms->momentum_buffer()));
    rms->grad_avg(field("grad_avg", rms->grad_avg()));
  } else {
    FT_CHECK(false, "no rule for this optimizer's state (", at, ")");
  }
}

}  // namespace

void update_optimizer_state(torch::optim::Optimizer& optimizer, const StateUpdate& update) {
  auto& state = optimizer.state();
  const auto& groups = optimizer.param_groups();
  for (std::size_t g = 0; g < groups.size(); ++g) {
    const auto& params = groups[g].params();
    for (std::size_t p = 0; p < params.size(); ++p) {
      const auto it = state.find(params[p].unsafeGetTensorImpl());
      if (it != state.end()) update_param_state(it->second.get(), cat("group", g, ".param", p, "."), update);
    }
  }
}

}  // namespace ft
