// Liveness and progress of every other rank, learned from small messages that a background thread
// exchanges on its own communicator; the stall inspector reads them to name the ranks a collective waits for.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "runtime/mpi_check.h"

namespace ft {

class World;

// What a peer last reported about the collectives of one backend.
struct PeerStatus {
  bool heard = false;          // a heartbeat arrived since the backend was created
  double silent_s = 0;         // seconds since the last heartbeat (or since creation, when never heard)
  std::uint64_t started = 0;   // collectives the peer had begun
  std::uint64_t finished = 0;  // collectives the peer had completed
};

// Every period (0.5 s, longer on large worlds so that a rank sends at most ~130 messages per second)
// the thread sends (epoch, started, finished) to every other rank with MPI_Isend, and drains what
// arrived with MPI_Improbe / MPI_Mrecv, polling every 50 ms. A send still in flight from the previous
// round is not repeated, so a hung peer never makes requests pile up. The epoch, agreed at creation,
// discards messages that a freed predecessor communicator left behind. Stopping is local: the thread
// releases its send requests (eager-sized, so they complete without the peer) and drains its queue.
class Heartbeat {
 public:
  // Collective over world.comm(); `started` and `finished` belong to the caller and must outlive this.
  Heartbeat(const World& world, const std::atomic<std::uint64_t>& started,
            const std::atomic<std::uint64_t>& finished);
  ~Heartbeat();
  Heartbeat(const Heartbeat&) = delete;
  Heartbeat& operator=(const Heartbeat&) = delete;

  // Indexed by rank; this rank's own entry is left empty.
  std::vector<PeerStatus> peers() const;
  // Empty while healthy; the MPI error that stopped the thread otherwise.
  std::string failure() const;
  double period_s() const { return period_.count(); }

 private:
  using Clock = std::chrono::steady_clock;
  struct Beat {
    std::uint64_t epoch, started, finished;
  };
  struct Peer {
    Clock::time_point last_heard;
    bool heard = false;
    std::uint64_t started = 0, finished = 0;
  };

  void run();
  void send_round();
  void receive_all();
  void release_sends();

  const std::atomic<std::uint64_t>& started_;
  const std::atomic<std::uint64_t>& finished_;
  MPI_Comm comm_ = MPI_COMM_NULL;
  int rank_ = 0, size_ = 1;
  std::uint64_t epoch_ = 0;
  std::chrono::duration<double> period_{0.5};
  Clock::time_point created_;

  std::vector<MPI_Request> sends_;  // owned by the thread
  std::vector<Beat> outbox_;        // one buffer per peer, alive while its send is in flight

  mutable std::mutex peers_mutex_;
  std::vector<Peer> peers_;
  std::string failure_;

  std::mutex stop_mutex_;
  std::condition_variable wake_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace ft
