// The Gloo backend: host-memory collectives over Gloo's TCP transport, wired up through MPI, with
// Gloo's own operation timeout set to the stall timeout and its timeouts reported as StallError.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <vector>

#include "comm/backend.h"

namespace gloo {
class Context;
namespace transport {
class Device;
}
}  // namespace gloo

namespace ft {

// The TCP device listens on the interface named by FUSETRAIN_GLOO_IFACE (e.g. "eth0", "ib0"), or by
// default on the address this host's name resolves to; a multi-node world whose default address is a
// loopback one is refused with a hint to set FUSETRAIN_GLOO_IFACE. Every collective gets a fresh tag,
// so the late messages of an abandoned operation never match a later one. Call from one thread.
class GlooBackend final : public Backend {
 public:
  static constexpr std::size_t kSegmentBytes = std::size_t{1} << 20;   // as Gloo's own ring

  // Collective over world.
  GlooBackend(const World& world, const BackendOptions& options);
  ~GlooBackend() override;

  bool uses_device_memory() const override { return false; }
  // A ring over the spans where they lie (gloo_ring.h); spans under kSmallSpanBytes travel staged.
  bool reduces_spans_in_place() const override { return true; }

 private:
  void transfer_allreduce(void* data, std::size_t count, DType dtype, void* stream) override;
  void transfer_allreduce_spans(const std::vector<HostSpan>& spans, DType dtype) override;
  void transfer_broadcast(void* data, std::size_t bytes, int root, void* stream) override;
  void transfer_allgather(const void* in, void* out, std::size_t bytes, void* stream) override;
  void transfer_barrier() override;
  // Runs `op` (a Gloo call with the next tag) and turns Gloo's exceptions into fusetrain errors.
  template <typename Op>
  void run(Op&& op);

  std::shared_ptr<gloo::transport::Device> device_;
  std::shared_ptr<gloo::Context> context_;
  std::chrono::milliseconds timeout_;
  std::uint32_t next_tag_ = 0;
};

}  // namespace ft
