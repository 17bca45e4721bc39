// Digests of a replica's state, recorded per epoch in the results file: two runs hold the same weights (or
// optimizer state) exactly when their digests agree, whatever their number of ranks.
#pragma once

#include <ATen/ATen.h>
#include <torch/optim/optimizer.h>

#include <string>

#include "models/network.h"

namespace ft {

// SHA-256 (64 hex digits) of the tensors' bytes in order, each as a contiguous CPU copy of its values.
std::string tensors_digest(const std::vector<at::Tensor>& tensors);

// The network's parameters and buffers, in the order of model_state.
std::string weights_digest(Network& network);

// The optimizer's state tensors (update_optimizer_state's order) and its step counts.
std::string optimizer_digest(torch::optim::Optimizer& optimizer);

}  // namespace ft
