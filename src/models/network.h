// The interface every model implements, and the factory that builds one by name from the config.
// Input shape and class count come from the data set, never from the model's own assumptions.
#pragma once

#include <torch/nn/module.h>

#include <memory>
#include <string>
#include <vector>

#include "config/schema.h"

namespace ft {

struct InputShape {
  int channels = 3, height = 32, width = 32;
  int classes = 10;
};

// A classifier: NCHW float input -> [N, classes] logits.
class Network : public torch::nn::Module {
 public:
  virtual at::Tensor forward(const at::Tensor& x) = 0;
};

// Builds model.name for the given input; throws ft::Error naming the key on bad settings.
std::shared_ptr<Network> make_network(const ModelConfig& config, const InputShape& input);

// Names accepted by make_network.
std::vector<std::string> network_names();

}  // namespace ft
