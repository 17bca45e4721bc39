// A rank's replica before its first step: its slices of the splits on the device, and the network, built
// from the seed, fitted to the data where a layer asks for it, and identical on every rank.
#pragma once

#include <ATen/ATen.h>

#include <memory>

#include "config/schema.h"
#include "data/dataset.h"
#include "models/network.h"
#include "shard/shard_format.h"

namespace ft {

class World;

struct RankSplits {
  std::unique_ptr<DeviceDataset> train, test;
  ShardMeta meta;  // the training split's description
};

// Each rank loads only its slice of the splits onto the device (global shuffle: the whole train split;
// distributed.reproducible evaluates the whole test split, in batches that do not depend on the ranks).
RankSplits load_rank_splits(const Config& config, const World& world, at::Device device);

// The network of `config` for `train`'s images, in `param_dtype` on `device`, laid out as configured and
// broadcast from rank 0 (collective); each rank's random streams seeded for what follows.
std::shared_ptr<Network> build_replica(const Config& config, const DeviceDataset& train, const World& world,
                                       at::Device device, at::ScalarType param_dtype);

// Collective: every rank's floating-point buffers (BatchNorm's running statistics) replaced by their mean
// over the ranks, as every evaluation scores and the model file keeps them.
void average_running_statistics(Network& net, const World& world);

}  // namespace ft
