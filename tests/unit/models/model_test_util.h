// Helpers shared by the model tests: building a network from a few settings, counting parameters,
// and listing parameter names.
#pragma once

#include <ATen/ATen.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "models/network.h"

namespace ft::test {

inline std::shared_ptr<Network> build(ModelName name, const InputShape& input, int width = 64,
                                      ConvReluKernel conv_relu = ConvReluKernel::aten) {
  ModelConfig config;
  config.name = name;
  config.width = width;
  config.conv_relu = conv_relu;
  return make_network(config, input);
}

inline std::int64_t parameter_count(const torch::nn::Module& module) {
  std::int64_t count = 0;
  for (const auto& p : module.parameters()) count += p.numel();
  return count;
}

inline std::vector<std::string> parameter_names(const torch::nn::Module& module) {
  std::vector<std::string> names;
  for (const auto& item : module.named_parameters()) names.push_back(item.key());
  return names;
}

inline bool has_parameter(const torch::nn::Module& module, const std::string& name) {
  return module.named_parameters().find(name) != nullptr;
}

}  // namespace ft::test
