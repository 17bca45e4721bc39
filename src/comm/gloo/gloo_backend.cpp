// Gloo collectives on host memory (fp16/bf16 summed through float as in the MPI backend), bounded by the
// stall timeout; a Gloo I/O failure or timeout becomes a StallError naming the ranks that are behind.
#include "comm/gloo/gloo_backend.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <cstdlib>
#include <vector>

#include <gloo/allgather.h>
#include <gloo/allreduce.h>
#include <gloo/barrier.h>
#include <gloo/broadcast.h>
#include <gloo/common/logging.h>
#include <gloo/rendezvous/context.h>
#include <gloo/transport/tcp/device.h>

#include "comm/gloo/gloo_mpi_store.h"
#include "comm/gloo/gloo_ring.h"
#include "comm/half.h"
#include "comm/span_staging.h"
#include "comm/stall_inspector.h"
#include "runtime/network_interface.h"
#include "runtime/thread_policy.h"
#include "runtime/world.h"

namespace ft {
namespace {

template <typename T>
void sum_into(void* out, const void* a, const void* b, std::size_t n) {
  auto* c = static_cast<T*>(out);
  const auto* x = static_cast<const T*>(a);
  const auto* y = static_cast<const T*>(b);
  for (std::size_t i = 0; i < n; ++i) c[i] = static_cast<T>(x[i] + y[i]);
}

template <>
void sum_into<Float16Bits>(void* out, const void* a, const void* b, std::size_t n) {
  sum_fp16(static_cast<std::uint16_t*>(out), static_cast<const std::uint16_t*>(a),
           static_cast<const std::uint16_t*>(b), n);
}

template <>
void sum_into<BFloat16Bits>(void* out, const void* a, const void* b, std::size_t n) {
  sum_bf16(static_cast<std::uint16_t*>(out), static_cast<const std::uint16_t*>(a),
           static_cast<const std::uint16_t*>(b), n);
}

SumFunction sum_function(DType dtype) {
  return visit_dtype(dtype, [](auto element) -> SumFunction { return &sum_into<decltype(element)>; });
}

bool is_loopback(const sockaddr_storage& address) {
  if (address.ss_family == AF_INET)
    return (ntohl(reinterpret_cast<const sockaddr_in&>(address).sin_addr.s_addr) >> 24) == 127;
  if (address.ss_family == AF_INET6)
    return IN6_IS_ADDR_LOOPBACK(&reinterpret_cast<const sockaddr_in6&>(address).sin6_addr);
  return false;
}

// The interface named in distributed.interface or FUSETRAIN_GLOO_IFACE, loopback on one node; on several
// nodes without either, the address the host name resolves to, which must not be a loopback one.
gloo::transport::tcp::attr device_attributes(const World& world, const std::string& interface) {
  gloo::transport::tcp::attr attr;
  attr.iface = socket_interface(interface, world.node_count(), "FUSETRAIN_GLOO_IFACE");
  if (attr.iface.empty()) attr.iface = process_env("FUSETRAIN_GLOO_IFACE").value_or("");
  if (!attr.iface.empty()) return attr;
  const auto resolved = gloo::transport::tcp::CreateDeviceAttr(attr);
  FT_REQUIRE(!is_loopback(resolved.ai_addr), "gloo: host name '", world.hostname(),
             "' resolves to a loopback address, which other nodes cannot reach; set distributed.interface "
             "to the network interface to use (e.g. eth0 or ib0)");
  return attr;
}

}  // namespace

// Creating the TCP device can fail on one rank only (a missing interface on one node); the ranks agree
// on the outcome before the rendezvous, so every rank reports the failure instead of the others hanging.
GlooBackend::GlooBackend(const World& world, const BackendOptions& options)
    : Backend(world, "gloo", options.stall_timeout_s),
      timeout_(std::chrono::milliseconds(static_cast<long long>(options.stall_timeout_s * 1000))) {
  std::string device_error;
  try {
    const auto attributes = device_attributes(world, options.interface);
    // The device's event-loop thread polls every socket level-triggered and skips a pair whose lock a
    // collective's thread holds, so if its wake-up preempts that thread on a shared core it spins until
    // the next scheduler tick (4 ms per message on a 250 Hz kernel). Under SCHED_BATCH it cannot preempt.
    for (long tid : threads_started_by([&] { device_ = gloo::transport::tcp::CreateDevice(attributes); }))
      set_batch_scheduling(tid);
  } catch (const gloo::Exception& e) {
    device_error = e.what();
  } catch (const gloo::EnforceNotMet& e) {
    device_error = e.what();
  } catch (const Error& e) {
    device_error = e.what();
  }
  const std::vector<std::string> errors = world.allgather(device_error);
  const std::vector<std::string> hosts = world.allgather(world.hostname());
  for (int r = 0; r < size_; ++r)
    FT_REQUIRE(errors[r].empty(), "gloo backend: rank ", r, " (", hosts[r], ") could not open its TCP device: ",
               errors[r]);
  try {
    auto context = std::make_shared<gloo::rendezvous::Context>(rank_, size_);
    context->setTimeout(timeout_);
    GlooMpiStore store(world.comm());
    context->connectFullMesh(store, device_);
    context_ = std::move(context);
  } catch (const gloo::Exception& e) {
    throw Error(cat("gloo backend: rank ", rank_, " (", world.hostname(), ") could not connect to its peers: ",
                    e.what()));
  }
}

GlooBackend::~GlooBackend() = default;

// A Gloo I/O failure is a timeout, or a peer that closed its connections after its own timeout: either
// way the collective cannot finish, and the heartbeat knows who is behind.
template <typename Op>
void GlooBackend::run(Op&& op) {
  const auto start = std::chrono::steady_clock::now();
  try {
    op(next_tag_++);
  } catch (const gloo::IoException& e) {
    const double waited_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    throw inspector().stall_error(waited_s, e.what());
  } catch (const gloo::Exception& e) {
    throw Error(cat(inspector().current(), " failed in gloo: ", e.what()));
  } catch (const gloo::EnforceNotMet& e) {
    throw Error(cat(inspector().current(), " was refused by gloo: ", e.what()));
  }
}

void GlooBackend::transfer_allreduce(void* data, std::size_t count, DType dtype, void*) {
  run([&](std::uint32_t tag) {
    gloo::AllreduceOptions options(context_);
    visit_dtype(dtype, [&](auto element) {
      using T = decltype(element);
      options.setOutput<T>(static_cast<T*>(data), count);
      options.setReduceFunction(&sum_into<T>);
    });
    options.setTag(tag);
    options.setTimeout(timeout_);
    gloo::allreduce(options);
  });
}

void GlooBackend::transfer_allreduce_spans(const std::vector<HostSpan>& spans, DType dtype) {
  const std::size_t element = dtype_size(dtype);
  SpanStaging staging(spans, element, kSmallSpanBytes);
  run([&](std::uint32_t tag) {
    if (size_ == 1) return;
    staging.gather();
    gloo_ring_allreduce(*context_, staging.regions(), element, sum_function(dtype), tag, timeout_, kSegmentBytes);
    staging.scatter();
  });
}

void GlooBackend::transfer_broadcast(void* data, std::size_t bytes, int root, void*) {
  run([&](std::uint32_t tag) {
    gloo::BroadcastOptions options(context_);
    options.setOutput<std::uint8_t>(static_cast<std::uint8_t*>(data), bytes);
    options.setRoot(root);
    options.setTag(tag);
    options.setTimeout(timeout_);
    gloo::broadcast(options);
  });
}

void GlooBackend::transfer_allgather(const void* in, void* out, std::size_t bytes, void*) {
  run([&](std::uint32_t tag) {
    auto* out_bytes = static_cast<std::uint8_t*>(out);
    gloo::AllgatherOptions options(context_);
    // Gloo copies a separate input into this rank's block itself; in place it has nothing to copy.
    if (in != out_bytes + static_cast<std::size_t>(rank_) * bytes)
      options.setInput<std::uint8_t>(const_cast<std::uint8_t*>(static_cast<const std::uint8_t*>(in)), bytes);
    options.setOutput<std::uint8_t>(out_bytes, bytes * static_cast<std::size_t>(size_));
    options.setTag(tag);
    options.setTimeout(timeout_);
    gloo::allgather(options);
  });
}

void GlooBackend::transfer_barrier() {
  run([&](std::uint32_t tag) {
    gloo::BarrierOptions options(context_);
    options.setTag(tag);
    options.setTimeout(timeout_);
    gloo::barrier(options);
  });
}

}  // namespace ft
