// Lays out a network's 4-d parameters (convolution weights) as channels_last, in place, for the runs,
// benchmarks and evaluations that feed it NHWC batches.
#pragma once

#include "models/network.h"

namespace ft {

// Every 4-d parameter becomes channels_last; the tensors keep their identity (optimizer and hooks still hold them).
void use_channels_last(Network& network);

}  // namespace ft
