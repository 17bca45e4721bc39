// The model summary: each layer in forward order with its output shape and parameter count, found by
// running the network once on a zero image of the run's shape and observing the operations it calls.
#pragma once

#include <vector>

#include "models/network.h"
#include "results/run_record.h"

namespace ft {

// One row per top-level operation of network.forward; an operation that uses a parameter is named
// after the module owning it (e.g. "conv1", "prep.bn"), others after the operation (e.g. "max_pool2d").
// Runs in eval mode without gradients on the network's device and dtype; the training mode is restored.
std::vector<ModelLayer> summarize_network(Network& network, const InputShape& input);

// Builds config's model on the CPU and summarises it (the run's own replica is left untouched).
std::vector<ModelLayer> model_summary(const ModelConfig& config, const InputShape& input);

}  // namespace ft
