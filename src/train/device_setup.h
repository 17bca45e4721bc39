// Placement of a rank: which device it trains on (GPU by node-local rank) and, on CPU hosts, how many
// compute threads it may use so that the ranks of one node do not oversubscribe its cores.
#pragma once

#include <ATen/Device.h>

#include "config/schema.h"

namespace ft {

class World;

bool cuda_available();
// Picks the device and limits threads; throws ft::Error naming the node and counts on bad placement.
at::Device place_rank(const Config& config, const World& world);
// Waits for all queued work on `device` (no-op on CPU).
void synchronize(const at::Device& device);

}  // namespace ft
