// The random streams of a rank: each rank draws (dropout masks, random layers) from its own deterministic
// stream of (train.seed, rank), and a checkpoint carries every rank's generator state to resume exactly.
#pragma once

#include <ATen/ATen.h>

#include <cstdint>
#include <string>
#include <vector>

namespace ft {

class World;

// A rank's generator states as LibTorch reports them (uint8 tensors); `cuda` is undefined off CUDA.
struct GeneratorState {
  at::Tensor cpu, cuda;
};

// The seed of `rank`'s stream: distinct per rank, a pure function of (seed, rank).
std::uint64_t rank_stream_seed(std::uint64_t seed, int rank);
// Seeds this process's CPU and CUDA generators with rank_stream_seed(seed, rank).
void seed_rank_streams(std::uint64_t seed, int rank);

GeneratorState capture_generators(const at::Device& device);
void restore_generators(const GeneratorState& state, const at::Device& device);
// Every rank's state, in rank order, on every rank (collective over world).
std::vector<GeneratorState> gather_generators(const World& world, const at::Device& device);

}  // namespace ft
