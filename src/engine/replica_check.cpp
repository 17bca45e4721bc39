// Bitwise replica verification. Identical optimizer arithmetic on identical all-reduced gradients keeps
// replicas bit-identical, so any difference at all means a rank diverged (or a backend is broken).
#include "engine/replica_check.h"

#include <sstream>

#include "comm/stall_inspector.h"
#include "runtime/error.h"
#include "runtime/world.h"

namespace ft {

std::uint64_t parameter_checksum(const std::vector<at::Tensor>& tensors) {
  std::uint64_t hash = 14695981039346656037ull;  // FNV-1a 64: offset basis, then the prime per byte
  for (const auto& t : tensors) {
    const auto host = t.detach().to(at::kCPU).contiguous();
    const auto* bytes = static_cast<const unsigned char*>(host.data_ptr());
    const auto n = static_cast<std::size_t>(host.numel() * host.element_size());
    for (std::size_t i = 0; i < n; ++i) hash = (hash ^ bytes[i]) * 1099511628211ull;
  }
  return hash;
}

void check_replicas(const std::vector<at::Tensor>& tensors, const World& world, std::int64_t step) {
  const CollectiveLabel label("replica checksums");
  const auto sums = world.allgather(std::to_string(parameter_checksum(tensors)));
  std::ostringstream differing;
  for (std::size_t r = 1; r < sums.size(); ++r)
    if (sums[r] != sums[0]) differing << (differing.tellp() > 0 ? "," : "") << r;
  FT_REQUIRE(differing.tellp() == 0, "replicas diverged at step ", step, ": parameters on rank(s) ",
             differing.str(), " differ from rank 0 (distributed.verify_replicas)");
}

}  // namespace ft
