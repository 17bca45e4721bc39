// The interface every model implements, and the factory that builds one by name from the config.
// Input shape and class count come from the data set, never from the model's own assumptions.
#pragma once

#include <torch/nn/module.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "config/schema.h"

namespace ft {

struct InputShape {
  int channels = 3, height = 32, width = 32;
  int classes = 10;
};

// How the optimizer treats one parameter of a model differently from the rest: `lr_scale` multiplies its
// learning rate (and divides its weight decay, so the decay per step stays the same), and after
// `train_epochs` epochs (0: never) its learning rate drops to zero, freezing it. With `own_decay` (and
// train_epochs > 0) its rate does not follow the schedule: it falls linearly from lr_scale x the base rate at
// the first step to zero at the end of its train_epochs.
struct ParameterRule {
  double lr_scale = 1.0;
  int train_epochs = 0;
  bool own_decay = false;
};

// A classifier: NCHW float input -> [N, classes] logits. Parameters with requires_grad false are
// frozen: they are neither all-reduced nor optimised.
class Network : public torch::nn::Module {
 public:
  virtual at::Tensor forward(const at::Tensor& x) = 0;
  // Called once before the replicas are synchronised (rank 0's result is broadcast), with normalised
  // training images (float NCHW, on the model's device and dtype); for layers fitted to the data.
  virtual void initialize_from_data(const at::Tensor& images) { (void)images; }
  // Rules for some parameters, by their name in named_parameters(); the others train as configured.
  virtual std::map<std::string, ParameterRule> parameter_rules() const { return {}; }
};

// Builds model.name for the given input; throws ft::Error naming the key on bad settings.
std::shared_ptr<Network> make_network(const ModelConfig& config, const InputShape& input);

}  // namespace ft
