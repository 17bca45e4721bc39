// Shared helpers of the multi-rank training tests: the world (test_world.h), synthetic shard sets written once by
// rank 0, and a small deterministic config (conv stack without dropout or batch norm).
#pragma once

#include <ATen/ATen.h>

#include <string>
#include <vector>

#include "config/schema.h"
#include "train/trainer.h"
#include "test_world.h"

namespace ft::test {

// Writes `shards` train shards holding `train` images and one test shard (8x8x3, 4 classes) under
// FT_TEST_TMP/<name> on rank 0; every rank returns the folder after a barrier. `identical`: every image
// (train and test) is the first one, with its label, so ranks see the same pixels whatever their slice.
std::string synthetic_shards(const std::string& name, std::int64_t train, int shards, bool identical = false);

Config small_config(const std::string& data_path, const std::string& backend);

// The tensor's bytes, for comparing tensors across ranks with World::allgather.
std::string bytes_of(const at::Tensor& t);

// Copies of the trained network's parameters.
std::vector<at::Tensor> parameters_of(const Trainer& trainer);

}  // namespace ft::test
