// Turns a collective that waits too long into a StallError that names the ranks it is waiting for:
// each backend counts the collectives it starts and a heartbeat tells every rank how far the others are.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "runtime/collective_watch.h"

namespace ft {

class World;
class Heartbeat;
struct PeerStatus;

// Names the collectives that the current thread starts while it is alive, for stall messages:
// `CollectiveLabel label("bucket 3"); backend.allreduce(...);`. Labels nest; the innermost one applies.
class CollectiveLabel {
 public:
  explicit CollectiveLabel(std::string text);
  ~CollectiveLabel();
  CollectiveLabel(const CollectiveLabel&) = delete;
  CollectiveLabel& operator=(const CollectiveLabel&) = delete;

  // The label in force on this thread ("" when none).
  static const std::string& current();

 private:
  std::string previous_;
};

// "4.2 MiB", "512 B": the sizes that stall messages quote.
std::string format_bytes(std::size_t bytes);

// What a stall message says of the other ranks, as rank `self` at collective #`mine` sees them: each peer
// silent for `silent_after_s` or more (dead or hung) or behind it (not started, idle after an earlier
// collective, or at one), "rank R (host) ...", joined by "; "; the first 8 named, the rest counted. Every
// suspect's rank goes to `suspects` when given. "" when no peer is suspect.
std::string describe_suspects(const std::vector<PeerStatus>& peers, const std::vector<std::string>& hosts, int self,
                              std::uint64_t mine, double silent_after_s, std::vector<int>* suspects);

// One per backend instance. begin()/end() bracket each collective on the thread that runs it; the
// heartbeat (a thread of its own when size > 1) publishes the counts. Creation is collective.
class StallInspector final : public CollectiveWatch {
 public:
  // Throws ft::Error when size > 1 and MPI was not initialised with MPI_THREAD_MULTIPLE.
  StallInspector(const World& world, std::string backend, double timeout_s);
  ~StallInspector();
  StallInspector(const StallInspector&) = delete;
  StallInspector& operator=(const StallInspector&) = delete;

  double timeout_s() const override { return timeout_s_; }

  // Marks the start of this rank's next collective (`kind` e.g. "all-reduce"); returns its number,
  // counting from 1. The label in force on the calling thread is recorded with it. The watch is
  // shared by the backend's thread and the world's control collectives, which run one at a time.
  std::uint64_t begin(const char* kind, std::size_t bytes, const char* transport) override;
  // A collective of this inspector's own backend.
  std::uint64_t begin(const char* kind, std::size_t bytes) { return begin(kind, bytes, backend_.c_str()); }
  // The collective begun last has completed.
  void end() override;

  // "all-reduce #12 (bucket 3, 4.2 MiB, mpi)": the collective begun last.
  std::string current() const;
  // Who the collective begun last is waiting for, e.g. "rank 1 (node7) not heard from for 59.8 s (dead
  // or hung); rank 2 (node8) is at collective #1230 (behind)"; names at most 8 ranks, then counts the
  // rest. Appends every suspected rank to `suspects`.
  std::string diagnose(std::vector<int>* suspects = nullptr) const;
  // The StallError for the collective begun last after waiting `waited_s`; `detail` (the transport's
  // own message, if any) is appended.
  StallError stall_error(double waited_s, const std::string& detail = "") const override;
  // The same for a wait that is not a numbered collective, e.g. "NCCL communicator set-up".
  StallError stall_error(const std::string& subject, double waited_s, const std::string& detail = "") const;
  // The StallError for the collective begun last when the transport says a peer is gone (a closed
  // connection, NCCL's remote error) before any timeout: it first waits, at most until the heartbeat would
  // call a dead peer silent (plus two heartbeat periods) and never past the stall timeout, for the heartbeat
  // to find a silent rank, so that the error names the rank that was lost. `detail` is the transport's word.
  StallError peer_lost_error(const std::string& detail) const;

 private:
  bool any_silent() const;

  std::string backend_;
  double timeout_s_;
  int rank_;
  std::vector<std::string> hosts_;
  std::atomic<std::uint64_t> started_{0}, finished_{0};
  mutable std::mutex mutex_;  // guards the description of the collective begun last
  const char* kind_ = "collective";
  std::size_t bytes_ = 0;
  std::string label_, transport_;
  std::unique_ptr<Heartbeat> heartbeat_;
};

}  // namespace ft
