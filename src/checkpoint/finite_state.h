// The guard before a checkpoint or model file is written: every weight, buffer and optimizer state tensor
// finite, so no file of a run ever holds an inf or NaN.
#pragma once

#include <ATen/ATen.h>
#include <torch/optim/optimizer.h>

#include <string>
#include <utility>
#include <vector>

#include "models/network.h"

namespace ft {

class World;

using NamedTensors = std::vector<std::pair<std::string, at::Tensor>>;

// The network's parameters and buffers, the optimizer's state and `extra` (lookahead's slow weights), named.
NamedTensors saved_state(Network& network, torch::optim::Optimizer* optimizer, const std::vector<at::Tensor>& extra);

// The name of the first floating-point tensor of `state` holding an inf or NaN, "" when all are finite (one
// device synchronisation in all).
std::string first_non_finite(const NamedTensors& state);

// Collective: throws on every rank, naming the tensor and `what` would have been written ("checkpoint F",
// "model file F"), when any rank's state is not finite.
void require_finite_state(const NamedTensors& state, const World& world, const std::string& what);

}  // namespace ft
