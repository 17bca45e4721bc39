// conv_stack: a sequential network written layer by layer in YAML (model.layers), with shapes
// inferred from the data set's input so that only output channels and features need stating.
#pragma once

#include <memory>

#include "models/network.h"

namespace ft {

// Builds model.layers in order. Submodules are named by type and index ("layers.conv0", "layers.bn1");
// a conv directly followed by relu becomes one ConvReLU under the conv's name. A flatten is inserted
// before the first linear (and at the end) when missing; a last linear with out 0 gets out = classes.
// Throws ft::Error naming model.layers[i] when a layer cannot take the shape it receives.
std::shared_ptr<Network> make_conv_stack(const ModelConfig& config, const InputShape& input);

}  // namespace ft
