// make_network: the one place that maps model.name to a model's factory, and checks the input
// shape every model relies on before building it. The names themselves live in config/choices.h.
#include "models/conv_stack.h"
#include "models/fast_cifar.h"
#include "models/network.h"
#include "models/resnet18.h"
#include "models/resnet9.h"
#include "models/simple_cnn.h"
#include "runtime/error.h"

namespace ft {

std::shared_ptr<Network> make_network(const ModelConfig& config, const InputShape& input) {
  FT_REQUIRE(input.channels >= 1 && input.height >= 1 && input.width >= 1 && input.classes >= 1,
             "model.name ", config.name, ": the data set's shape ", input.channels, "x", input.height, "x",
             input.width, " with ", input.classes, " classes is not a valid input");
  // No default: a name added to ModelName without a factory here does not compile (-Werror=switch).
  switch (config.name) {
    case ModelName::simple_cnn: return make_simple_cnn(config, input);
    case ModelName::conv_stack: return make_conv_stack(config, input);
    case ModelName::resnet18: return make_resnet18(config, input);
    case ModelName::resnet9: return make_resnet9(config, input);
    case ModelName::fast_cifar: return make_fast_cifar(config, input);
  }
  throw Error(cat("model.name: unknown network ", static_cast<int>(config.name)));
}

}  // namespace ft
