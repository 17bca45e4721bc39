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
#include <gloo/types.h>

#include "comm/gloo/gloo_mpi_store.h"
#include "comm/gloo/gloo_ring.h"
#include "comm/half.h"
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

void sum_fp16_into(void* out, const void* a, const void* b, std::size_t n) {
  sum_fp16(static_cast<std::uint16_t*>(out), static_cast<const std::uint16_t*>(a),
           static_cast<const std::uint16_t*>(b), n);
}

void sum_bf16_into(void* out, const void* a, const void* b, std::size_t n) {
  sum_bf16(static_cast<std::uint16_t*>(out), static_cast<const std::uint16_t*>(a),
           static_cast<const std::uint16_t*>(b), n);
}

template <typename T>
void set_sum(gloo::AllreduceOptions& options, void* data, std::size_t count,
             void (*reduce)(void*, const void*, const void*, std::size_t)) {
  options.setOutput<T>(static_cast<T*>(data), count);
  options.setReduceFunction(reduce);
}

SumFunction sum_function(DType dtype) {
  switch (dtype) {
    case DType::kFloat16: return &sum_fp16_into;
    case DType::kBFloat16: return &sum_bf16_into;
    case DType::kFloat32: return &sum_into<float>;
    case DType::kFloat64: return &sum_into<double>;
    case DType::kInt32: return &sum_into<std::int32_t>;
    case DType::kInt64: return &sum_into<std::int64_t>;
    case DType::kUInt8: return &sum_into<std::uint8_t>;
  }
  throw Error(cat("gloo: unknown dtype ", static_cast<int>(dtype)));
}

bool is_loopback(const sockaddr_storage& address) {
  if (address.ss_family == AF_INET)
    return (ntohl(reinterpret_cast<const sockaddr_in&>(address).sin_addr.s_addr) >> 24) == 127;
  if (address.ss_family == AF_INET6)
    return IN6_IS_ADDR_LOOPBACK(&reinterpret_cast<const sockaddr_in6&>(address).sin6_addr);
  return false;
}

gloo::transport::tcp::attr device_attributes(const World& world) {
  gloo::transport::tcp::attr attr;
  const char* iface = std::getenv("FUSETRAIN_GLOO_IFACE");
  if (iface && *iface) {
    attr.iface = iface;
    return attr;
  }
  const auto resolved = gloo::transport::tcp::CreateDeviceAttr(attr);
  FT_REQUIRE(world.node_count() == 1 || !is_loopback(resolved.ai_addr), "gloo: host name '",
             world.hostname(), "' resolves to a loopback address, which other nodes cannot reach; set "
             "FUSETRAIN_GLOO_IFACE to the network interface to use (e.g. eth0 or ib0)");
  return attr;
}

}  // namespace

// Creating the TCP device can fail on one rank only (a missing interface on one node); the ranks agree
// on the outcome before the rendezvous, so every rank reports the failure instead of the others hanging.
GlooBackend::GlooBackend(const World& world, const BackendOptions& options)
    : Backend(world.rank(), world.size()),
      inspector_(world, "gloo", options.stall_timeout_s),
      timeout_(std::chrono::milliseconds(static_cast<long long>(options.stall_timeout_s * 1000))) {
  std::string device_error;
  try {
    const auto attributes = device_attributes(world);
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
  const char* iface = std::getenv("FUSETRAIN_GLOO_IFACE");
  for (int r = 0; r < size_; ++r)
    FT_REQUIRE(errors[r].empty(), "gloo backend: rank ", r, " (", hosts[r], ") could not open its TCP device",
               iface && *iface ? cat(" on FUSETRAIN_GLOO_IFACE=", iface) : std::string(), ": ", errors[r]);
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

template <typename Op>
void GlooBackend::run(const char* kind, std::size_t bytes, Op&& op) {
  FT_REQUIRE(failure_.empty(), "the gloo backend is unusable after an earlier failure: ", failure_);
  inspector_.begin(kind, bytes);
  const auto start = std::chrono::steady_clock::now();
  try {
    op(next_tag_++);
  } catch (const gloo::IoException& e) {
    // A timeout, or a peer that closed its connections after its own timeout: either way the
    // collective cannot finish, and the heartbeat knows who is behind.
    const double waited_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const StallError error = inspector_.stall_error(waited_s, e.what());
    failure_ = error.what();
    throw error;
  } catch (const gloo::Exception& e) {
    failure_ = cat(inspector_.current(), " failed in gloo: ", e.what());
    throw Error(failure_);
  } catch (const gloo::EnforceNotMet& e) {
    failure_ = cat(inspector_.current(), " was refused by gloo: ", e.what());
    throw Error(failure_);
  }
  inspector_.end();
}

void GlooBackend::allreduce(void* data, std::size_t count, DType dtype, void*) {
  run("all-reduce", count * dtype_size(dtype), [&](std::uint32_t tag) {
    if (count == 0) return;
    gloo::AllreduceOptions options(context_);
    switch (dtype) {
      case DType::kFloat16: set_sum<gloo::float16>(options, data, count, &sum_fp16_into); break;
      case DType::kBFloat16: set_sum<std::uint16_t>(options, data, count, &sum_bf16_into); break;
      case DType::kFloat32: set_sum<float>(options, data, count, &sum_into<float>); break;
      case DType::kFloat64: set_sum<double>(options, data, count, &sum_into<double>); break;
      case DType::kInt32: set_sum<std::int32_t>(options, data, count, &sum_into<std::int32_t>); break;
      case DType::kInt64: set_sum<std::int64_t>(options, data, count, &sum_into<std::int64_t>); break;
      case DType::kUInt8: set_sum<std::uint8_t>(options, data, count, &sum_into<std::uint8_t>); break;
    }
    options.setTag(tag);
    options.setTimeout(timeout_);
    gloo::allreduce(options);
  });
}

void GlooBackend::allreduce_spans(const std::vector<HostSpan>& spans, DType dtype) {
  const std::size_t element = dtype_size(dtype);
  SpanStaging staging(spans, element, kSmallSpanBytes);
  run("all-reduce", staging.total_count() * element, [&](std::uint32_t tag) {
    if (size_ == 1 || staging.total_count() == 0) return;
    staging.gather();
    gloo_ring_allreduce(*context_, staging.regions(), element, sum_function(dtype), tag, timeout_, kSegmentBytes);
    staging.scatter();
  });
}

void GlooBackend::broadcast(void* data, std::size_t bytes, int root, void*) {
  FT_REQUIRE(root >= 0 && root < size_, "broadcast root ", root, " is not a rank of a world of ", size_);
  run("broadcast", bytes, [&](std::uint32_t tag) {
    if (bytes == 0) return;
    gloo::BroadcastOptions options(context_);
    options.setOutput<std::uint8_t>(static_cast<std::uint8_t*>(data), bytes);
    options.setRoot(root);
    options.setTag(tag);
    options.setTimeout(timeout_);
    gloo::broadcast(options);
  });
}

void GlooBackend::allgather(const void* in, void* out, std::size_t bytes, void*) {
  run("all-gather", bytes * static_cast<std::size_t>(size_), [&](std::uint32_t tag) {
    if (bytes == 0) return;
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

void GlooBackend::barrier() {
  run("barrier", 0, [&](std::uint32_t tag) {
    gloo::BarrierOptions options(context_);
    options.setTag(tag);
    options.setTimeout(timeout_);
    gloo::barrier(options);
  });
}

}  // namespace ft
