// Per-rank random streams: seeding from (seed, rank) with the augmentation's mixing function, and the
// capture, restore and gather of generator states that checkpoints store per rank.
#include "optim/rank_streams.h"

#include <ATen/CPUGeneratorImpl.h>

#ifdef FUSETRAIN_WITH_CUDA
#include <ATen/cuda/CUDAGeneratorImpl.h>
#endif

#include <cstring>

#include "kernels/augment.h"
#include "runtime/error.h"
#include "runtime/world.h"

namespace ft {
namespace {

// A state travels as [cpu bytes][cuda bytes] behind the cpu byte count.
std::string to_bytes(const GeneratorState& state) {
  const at::Tensor cpu = state.cpu.contiguous();
  const at::Tensor cuda = state.cuda.defined() ? state.cuda.contiguous() : at::empty({0}, at::kByte);
  const std::uint64_t cpu_bytes = static_cast<std::uint64_t>(cpu.numel());
  std::string out(sizeof cpu_bytes, '\0');
  std::memcpy(out.data(), &cpu_bytes, sizeof cpu_bytes);
  out.append(static_cast<const char*>(cpu.data_ptr()), cpu.numel());
  out.append(static_cast<const char*>(cuda.data_ptr()), cuda.numel());
  return out;
}

at::Tensor byte_tensor(const char* data, std::size_t bytes) {
  at::Tensor t = at::empty({static_cast<std::int64_t>(bytes)}, at::kByte);
  if (bytes > 0) std::memcpy(t.data_ptr(), data, bytes);
  return t;
}

GeneratorState from_bytes(const std::string& bytes, int rank) {
  std::uint64_t cpu_bytes = 0;
  FT_CHECK(bytes.size() >= sizeof cpu_bytes, "generator state of rank ", rank, " is truncated");
  std::memcpy(&cpu_bytes, bytes.data(), sizeof cpu_bytes);
  FT_CHECK(bytes.size() >= sizeof cpu_bytes + cpu_bytes, "generator state of rank ", rank, " is truncated");
  const char* cpu = bytes.data() + sizeof cpu_bytes;
  const std::size_t cuda_bytes = bytes.size() - sizeof cpu_bytes - cpu_bytes;
  GeneratorState state{byte_tensor(cpu, cpu_bytes), at::Tensor()};
  if (cuda_bytes > 0) state.cuda = byte_tensor(cpu + cpu_bytes, cuda_bytes);
  return state;
}

}  // namespace

std::uint64_t rank_stream_seed(std::uint64_t seed, int rank) {
  return mix64(seed ^ mix64(0x72616e6b00000000ull + static_cast<std::uint64_t>(rank)));
}

void seed_rank_streams(std::uint64_t seed, int rank) { at::manual_seed(rank_stream_seed(seed, rank)); }

GeneratorState capture_generators(const at::Device& device) {
  GeneratorState state{at::detail::getDefaultCPUGenerator().get_state(), at::Tensor()};
#ifdef FUSETRAIN_WITH_CUDA
  if (device.is_cuda()) state.cuda = at::cuda::detail::getDefaultCUDAGenerator(device.index()).get_state();
#else
  (void)device;
#endif
  return state;
}

// A CUDA state restores only onto a CUDA device: a GPU run resumed on a CPU keeps its CPU stream, and a
// CPU run resumed on a GPU keeps the device generator's seed.
void restore_generators(const GeneratorState& state, const at::Device& device) {
  at::Generator cpu = at::detail::getDefaultCPUGenerator();
  cpu.set_state(state.cpu.to(at::kCPU));
#ifdef FUSETRAIN_WITH_CUDA
  if (device.is_cuda() && state.cuda.defined()) {
    at::Generator cuda = at::cuda::detail::getDefaultCUDAGenerator(device.index());
    cuda.set_state(state.cuda.to(at::kCPU));
  }
#else
  (void)device;
#endif
}

std::vector<GeneratorState> gather_generators(const World& world, const at::Device& device) {
  const std::vector<std::string> all = world.allgather(to_bytes(capture_generators(device)));
  std::vector<GeneratorState> out;
  for (std::size_t r = 0; r < all.size(); ++r) out.push_back(from_bytes(all[r], static_cast<int>(r)));
  return out;
}

}  // namespace ft
