// Detects diverged replicas: a checksum of every parameter's bytes is compared across ranks, and any
// difference is an error naming the ranks that differ from rank 0 and the step.
#pragma once

#include <ATen/ATen.h>

#include <cstdint>
#include <vector>

namespace ft {

class World;

// FNV-1a over the raw bytes of each tensor, in order.
std::uint64_t parameter_checksum(const std::vector<at::Tensor>& tensors);
// Collective: throws ft::Error on every rank when the checksums differ.
void check_replicas(const std::vector<at::Tensor>& tensors, const World& world, std::int64_t step);

}  // namespace ft
