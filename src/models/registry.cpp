// make_network: the one place that maps model.name to a model's factory, and checks the input
// shape every model relies on before building it.
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "models/conv_stack.h"
#include "models/fast_cifar.h"
#include "models/network.h"
#include "models/resnet18.h"
#include "models/resnet9.h"
#include "models/simple_cnn.h"
#include "runtime/error.h"

namespace ft {
namespace {

using Factory = std::function<std::shared_ptr<Network>(const ModelConfig&, const InputShape&)>;

const std::vector<std::pair<std::string, Factory>>& factories() {
  static const std::vector<std::pair<std::string, Factory>> table = {
      {"simple_cnn", make_simple_cnn},
      {"conv_stack", make_conv_stack},
      {"resnet18", make_resnet18},
      {"resnet9", make_resnet9},
      {"fast_cifar", make_fast_cifar},
  };
  return table;
}

}  // namespace

std::vector<std::string> network_names() {
  std::vector<std::string> names;
  for (const auto& entry : factories()) names.push_back(entry.first);
  return names;
}

std::shared_ptr<Network> make_network(const ModelConfig& config, const InputShape& input) {
  FT_REQUIRE(input.channels >= 1 && input.height >= 1 && input.width >= 1 && input.classes >= 1,
             "model.name ", config.name, ": the data set's shape ", input.channels, "x", input.height, "x",
             input.width, " with ", input.classes, " classes is not a valid input");
  for (const auto& [name, factory] : factories())
    if (name == config.name) return factory(config, input);
  std::string valid;
  for (const auto& name : network_names()) valid += (valid.empty() ? "" : ", ") + name;
  throw Error(cat("model.name: unknown network '", config.name, "' (valid: ", valid, ")"));
}

}  // namespace ft
