// simple_cnn: the coursework network, 3 x [conv3x3 + ReLU + maxpool 2x2] with 32/64/128 channels,
// then Linear(256) + ReLU + Dropout and Linear(classes), sized for any input shape.
#pragma once

#include <memory>

#include "models/network.h"

namespace ft {

// Parameters: conv1..conv3 (ConvReLU), fc1, fc2. Needs inputs of at least 8x8 (three 2x2 poolings).
std::shared_ptr<Network> make_simple_cnn(const ModelConfig& config, const InputShape& input);

}  // namespace ft
