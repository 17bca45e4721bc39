// The collective-communication interface that the gradient engine and metric reduction use, with one
// implementation per transport (MPI, Gloo, NCCL). Buffers are raw memory plus a dtype: no LibTorch here.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "comm/dtype.h"
#include "config/choices.h"

namespace ft {

class World;
class StallInspector;

// Thrown when a collective has waited longer than the stall timeout; the message names the ranks.
class StallError;
class CollectiveWatch;

// `count` elements of host memory at `data`: one piece of a list that is reduced as one vector.
struct HostSpan {
  void* data;
  std::size_t count;
};

// A failure the transport reports by itself rather than as a collective's result (NCCL's asynchronous errors):
// `peer_lost` when it means that a peer is gone (its process exited, its connection closed).
struct TransportFailure {
  bool peer_lost = false;
  std::string what;
};

// The public collectives are the same for every transport: each refuses work after an earlier failure
// (repeating it), checks its arguments, is numbered and bracketed for the stall inspector, and records
// the error of a failed transfer. A transport implements only the transfers, in the protected hooks;
// a hook that throws leaves the backend unusable (after on_failure() has let the transport clean up).
class Backend {
 public:
  // Spans of fewer bytes are staged together by backends that reduce spans where they lie.
  static constexpr std::size_t kSmallSpanBytes = std::size_t{64} << 10;

  virtual ~Backend();
  Backend(const Backend&) = delete;
  Backend& operator=(const Backend&) = delete;

  const std::string& name() const { return name_; }
  // True when collectives take device (GPU) pointers directly.
  virtual bool uses_device_memory() const = 0;
  // True when allreduce_spans leaves large spans in place (only small ones are staged).
  virtual bool reduces_spans_in_place() const { return false; }
  // How all-reduce moves data: "flat" (all ranks at once) or "hierarchical" (through node leaders).
  virtual AllreduceAlgorithm allreduce_algorithm() const { return AllreduceAlgorithm::flat; }

  // In-place element-wise sum over all ranks of `count` elements at `data`.
  // `stream` is a cudaStream_t for device backends and ignored otherwise.
  void allreduce(void* data, std::size_t count, DType dtype, void* stream = nullptr);
  // In-place element-wise sum over all ranks of the concatenation of `spans` (host memory; every rank
  // passes the same counts in the same order).
  void allreduce_spans(const std::vector<HostSpan>& spans, DType dtype);
  // Copies `bytes` at `data` on `root` to every rank.
  void broadcast(void* data, std::size_t bytes, int root, void* stream = nullptr);
  // Gathers `bytes` from every rank into `out` (size() * bytes), ordered by rank.
  void allgather(const void* in, void* out, std::size_t bytes, void* stream = nullptr);
  void barrier();
  // A backend whose all-reduce returns once the transfer is enqueued on a device stream (NCCL) keeps it
  // in flight until the device completes it. poll_in_flight() retires completed ones and, when one has
  // waited past the stall timeout or the transport reports an error, aborts and throws a StallError;
  // wait_in_flight() also blocks until none is left, wait_in_flight(keep) until at most `keep` are (how
  // far a host that enqueues without waiting may run ahead of its device). No-ops for backends whose
  // calls complete in them.
  void poll_in_flight();
  void wait_in_flight(std::size_t keep = 0);
  // The stall inspector that numbers this backend's collectives, so that the world's control collectives
  // can be numbered and diagnosed with them (World::set_watch).
  CollectiveWatch* watch();
  // A test seam: the next collective fails with `failure` as if the transport had reported it (the path of an
  // asynchronous NCCL error, on any backend).
  void plant_transport_failure(TransportFailure failure);

  int rank() const { return rank_; }
  int size() const { return size_; }

 protected:
  // Collective over world: creates the stall inspector of the backend called `name`.
  Backend(const World& world, std::string name, double stall_timeout_s);

  // The transfers. Hooks are not called for empty buffers, except barrier.
  virtual void transfer_allreduce(void* data, std::size_t count, DType dtype, void* stream) = 0;
  // Default: one span is reduced where it lies, several are copied into one buffer and back.
  virtual void transfer_allreduce_spans(const std::vector<HostSpan>& spans, DType dtype);
  virtual void transfer_broadcast(void* data, std::size_t bytes, int root, void* stream) = 0;
  virtual void transfer_allgather(const void* in, void* out, std::size_t bytes, void* stream) = 0;
  virtual void transfer_barrier() = 0;
  // The transport's side of poll_in_flight (keep = kPollOnly: never waits) and wait_in_flight(keep).
  static constexpr std::size_t kPollOnly = SIZE_MAX;
  virtual void transfer_in_flight(std::size_t keep) { (void)keep; }
  // After a hook threw: lets the transport give up what the failed collective still holds.
  virtual void on_failure() noexcept {}

  // Ends the collective with `failure`: a StallError naming the lost rank (stall_inspector's peer_lost_error)
  // when a peer is gone, an ft::Error otherwise.
  [[noreturn]] void raise_transport_failure(const TransportFailure& failure) const;

  StallInspector& inspector() { return *inspector_; }
  const StallInspector& inspector() const { return *inspector_; }

  int rank_, size_;

 private:
  template <typename Transfer>
  void guarded(const char* kind, std::size_t bytes, Transfer&& transfer);
  // Runs `work` unless an earlier failure made the backend unusable; a throw is recorded as that failure.
  template <typename Work>
  void recording_failure(Work&& work);

  std::string name_;
  std::unique_ptr<StallInspector> inspector_;
  std::unique_ptr<TransportFailure> planted_;  // plant_transport_failure's, for the next collective
  std::mutex failure_mutex_;  // the in-flight watch may record a failure from another thread
  std::string failure_;
};

struct BackendOptions {
  BackendName name = BackendName::mpi;  // distributed.backend
  AllreduceAlgorithm allreduce = AllreduceAlgorithm::automatic;  // distributed.allreduce
  MpiAlgorithm mpi_algorithm = MpiAlgorithm::automatic;          // distributed.mpi_algorithm
  double stall_timeout_s = 60;   // a collective not finished by then throws StallError
  int cuda_device = -1;          // nccl: the device this rank drives
  std::string interface = "auto";  // distributed.interface: gloo's device, nccl's sockets
};

// What an asynchronous NCCL error with this ncclResult_t value means (its text from NCCL itself), for tests of
// that path on hosts without a GPU; throws ft::Error in a build without NCCL.
TransportFailure nccl_transport_failure(int nccl_result);

// The version of the NCCL library this process runs (NCCL_VERSION_CODE's encoding: 22809 for 2.28.9), asked of
// the library itself; 0 in a build without NCCL.
int nccl_version_code();

// Creates the backend named in options over `world` (collective: every rank must call it).
// Throws ft::Error for a backend not built into this binary.
std::unique_ptr<Backend> make_backend(const World& world, const BackendOptions& options);

}  // namespace ft
