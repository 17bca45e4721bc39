// The MPI world of one fusetrain process: rank, size, node-local rank and node count, plus the few
// control-plane collectives (strings, scalars) that configuration checks and metric reduction need.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "runtime/collective_watch.h"
#include "runtime/mpi_check.h"
#include "runtime/poll_backoff.h"

namespace ft {

class World {
 public:
  // Initialises MPI (thread-multiple) unless it already is; finalises in the destructor if it initialised.
  World(int* argc, char*** argv);
  // A world over an existing communicator (e.g. MPI_COMM_SELF for a single-rank reference run inside
  // a multi-rank job); MPI must already be initialised and is not finalised by this object.
  explicit World(MPI_Comm parent);
  ~World();
  World(const World&) = delete;
  World& operator=(const World&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }
  int local_rank() const { return local_rank_; }
  int local_size() const { return local_size_; }
  int node_count() const { return node_count_; }
  const std::string& hostname() const { return hostname_; }
  bool thread_multiple() const { return thread_multiple_; }
  MPI_Comm comm() const { return comm_; }

  // Bounds every collective below by `timeout_s` seconds (<= 0, the default: no bound). A collective that
  // does not complete in time throws StallError; the world is unusable afterwards and the job should end.
  void set_timeout(double timeout_s) { timeout_s_ = timeout_s; }
  // While set, the collectives below are also numbered by `watch` (a backend's stall inspector) and bounded
  // by its timeout, so that a timeout names the ranks that are missing. nullptr detaches it.
  void set_watch(CollectiveWatch* watch) { watch_ = watch; }

  std::vector<std::string> allgather(const std::string& mine) const;
  std::string broadcast(const std::string& value, int root = 0) const;
  void broadcast_bytes(void* data, std::size_t bytes, int root = 0) const;
  void allreduce_sum(double* values, int count) const;
  void allreduce_max(double* values, int count) const;
  double allreduce_sum(double value) const;
  double allreduce_max(double value) const;
  // Exact: integer sums do not depend on the order ranks combine them in.
  void allreduce_sum(std::int64_t* values, int count) const;
  void barrier() const;
  // The same, sleeping between polls from the start instead of yielding first: ranks that share cores with ranks
  // still computing leave them the cores, as training's ranks do while they wait for their all-reduce.
  void barrier_sleeping() const;

  // Collective: runs `decide` on rank 0 alone; when it throws, every rank throws a SharedError with its
  // message, so that a refusal rank 0 found (a file it looked at) is one message and no rank hangs.
  void decide_on_rank0(const std::function<void()>& decide) const;

  // Prints "fusetrain: rank R: error: message" and takes the whole job down (MPI_Abort).
  [[noreturn]] void abort(const std::string& message, int code = 1) const;

 private:
  bool owns_mpi_ = false;
  bool thread_multiple_ = false;
  MPI_Comm comm_ = MPI_COMM_NULL;
  int rank_ = 0, size_ = 1, local_rank_ = 0, local_size_ = 1, node_count_ = 1;
  std::string hostname_;
  double timeout_s_ = 0;
  CollectiveWatch* watch_ = nullptr;
  // Requests that timed out and the buffers they may still write into: kept until shut-down.
  mutable std::vector<std::pair<MPI_Request, std::shared_ptr<void>>> abandoned_;
  mutable std::string failure_;

  // Fills rank, size, node-local rank, node count and hostname from comm_.
  void describe();
  // Waits for `request` (a collective of `bytes` that may write into `buffer`) within the timeout.
  // Polls `request` until done, yielding for `spin` first, then sleeping (runtime/poll_backoff.h).
  void complete(const char* kind, std::size_t bytes, MPI_Request request, std::shared_ptr<void> buffer,
                std::chrono::microseconds spin = PollBackoff::kSpin) const;
  // The barrier of barrier() and barrier_sleeping(), its wait yielding for `spin` before it sleeps.
  void barrier_polling(std::chrono::microseconds spin) const;
  template <typename T>
  void allreduce(T* values, int count, MPI_Datatype type, MPI_Op op) const;
  void require_usable() const;  // throws once a collective has timed out
};

// Attaches `watch` to `world` for the lifetime of this object: `WatchedCollectives w(world, inspector);`.
class WatchedCollectives {
 public:
  WatchedCollectives(World& world, CollectiveWatch* watch) : world_(world) { world_.set_watch(watch); }
  ~WatchedCollectives() { world_.set_watch(nullptr); }
  WatchedCollectives(const WatchedCollectives&) = delete;
  WatchedCollectives& operator=(const WatchedCollectives&) = delete;

 private:
  World& world_;
};

}  // namespace ft
