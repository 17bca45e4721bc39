// The heartbeat thread of the stall inspector: point-to-point messages on a private communicator that
// tell each rank how far every other rank has got and when it was last heard from.
#include "comm/stall_heartbeat.h"

#include <cstdio>
#include <cstring>

#include "runtime/world.h"

namespace ft {
namespace {

constexpr int kBeatTag = 7;
constexpr auto kPoll = std::chrono::milliseconds(50);
constexpr int kPeersPerHalfSecond = 64;

// Backends are created collectively, so every rank creates heartbeats in the same order; the epoch is
// still agreed with a max-reduction so that one rank's stray extra instance cannot desynchronise it.
std::atomic<std::uint64_t> g_instances{0};

}  // namespace

Heartbeat::Heartbeat(const World& world, const std::atomic<std::uint64_t>& started,
                     const std::atomic<std::uint64_t>& finished)
    : started_(started), finished_(finished), rank_(world.rank()), size_(world.size()),
      created_(Clock::now()) {
  peers_.assign(size_, Peer{created_});
  if (size_ == 1) return;
  FT_CHECK_MPI(MPI_Comm_dup(world.comm(), &comm_));
  FT_CHECK_MPI(MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN));
  unsigned long long epoch = ++g_instances;
  FT_CHECK_MPI(MPI_Allreduce(MPI_IN_PLACE, &epoch, 1, MPI_UNSIGNED_LONG_LONG, MPI_MAX, comm_));
  epoch_ = epoch;
  g_instances = epoch;
  period_ *= (size_ + kPeersPerHalfSecond - 1) / kPeersPerHalfSecond;
  sends_.assign(size_, MPI_REQUEST_NULL);
  outbox_.assign(size_, Beat{});
  thread_ = std::thread([this] { run(); });
}

Heartbeat::~Heartbeat() {
  if (thread_.joinable()) {
    {
      std::lock_guard<std::mutex> lock(stop_mutex_);
      stop_ = true;
    }
    wake_.notify_all();
    thread_.join();
  }
  if (comm_ == MPI_COMM_NULL) return;
  try {
    FT_CHECK_MPI(MPI_Comm_free(&comm_));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fusetrain: warning: stall heartbeat shut-down: %s\n", e.what());
  }
}

std::vector<PeerStatus> Heartbeat::peers() const {
  const auto now = Clock::now();
  std::lock_guard<std::mutex> lock(peers_mutex_);
  std::vector<PeerStatus> out(size_);
  for (int r = 0; r < size_; ++r) {
    if (r == rank_) continue;
    const Peer& peer = peers_[r];
    out[r].heard = peer.heard;
    out[r].silent_s = std::chrono::duration<double>(now - peer.last_heard).count();
    out[r].started = peer.started;
    out[r].finished = peer.finished;
  }
  return out;
}

std::string Heartbeat::failure() const {
  std::lock_guard<std::mutex> lock(peers_mutex_);
  return failure_;
}

void Heartbeat::run() {
  try {
    auto next_send = Clock::now();
    std::unique_lock<std::mutex> lock(stop_mutex_);
    while (!stop_) {
      lock.unlock();
      if (Clock::now() >= next_send) {
        send_round();
        next_send = Clock::now() + std::chrono::duration_cast<Clock::duration>(period_);
      }
      receive_all();
      lock.lock();
      wake_.wait_for(lock, kPoll, [this] { return stop_; });
    }
  } catch (const std::exception& e) {
    std::lock_guard<std::mutex> lock(peers_mutex_);
    failure_ = e.what();
  }
  try {
    release_sends();
    receive_all();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fusetrain: warning: stall heartbeat shut-down: %s\n", e.what());
  }
}

void Heartbeat::send_round() {
  const Beat beat{epoch_, started_.load(), finished_.load()};
  for (int peer = 0; peer < size_; ++peer) {
    if (peer == rank_) continue;
    if (sends_[peer] != MPI_REQUEST_NULL) {
      int done = 0;
      FT_CHECK_MPI(MPI_Test(&sends_[peer], &done, MPI_STATUS_IGNORE));
      if (!done) continue;  // the peer is not draining its queue; do not pile up more
    }
    outbox_[peer] = beat;
    FT_CHECK_MPI(MPI_Isend(&outbox_[peer], sizeof(Beat), MPI_BYTE, peer, kBeatTag, comm_, &sends_[peer]));
  }
}

void Heartbeat::receive_all() {
  for (;;) {
    int found = 0;
    MPI_Message message;
    MPI_Status status;
    FT_CHECK_MPI(MPI_Improbe(MPI_ANY_SOURCE, MPI_ANY_TAG, comm_, &found, &message, &status));
    if (!found) return;
    int bytes = 0;
    FT_CHECK_MPI(MPI_Get_count(&status, MPI_BYTE, &bytes));
    std::vector<char> buffer(static_cast<std::size_t>(bytes));
    FT_CHECK_MPI(MPI_Mrecv(buffer.data(), bytes, MPI_BYTE, &message, MPI_STATUS_IGNORE));
    if (status.MPI_TAG != kBeatTag || bytes != static_cast<int>(sizeof(Beat))) continue;
    Beat beat;
    std::memcpy(&beat, buffer.data(), sizeof beat);
    if (beat.epoch != epoch_) continue;
    std::lock_guard<std::mutex> lock(peers_mutex_);
    Peer& peer = peers_[status.MPI_SOURCE];
    peer.last_heard = Clock::now();
    peer.heard = true;
    peer.started = beat.started;
    peer.finished = beat.finished;
  }
}

// A heartbeat is far below the eager limit, so its send completes once the message is buffered at the
// peer; a send still pending after a short grace period is released (MPI completes it in the background).
void Heartbeat::release_sends() {
  const auto grace_end = Clock::now() + std::chrono::milliseconds(200);
  for (MPI_Request& request : sends_) {
    while (request != MPI_REQUEST_NULL) {
      int done = 0;
      FT_CHECK_MPI(MPI_Test(&request, &done, MPI_STATUS_IGNORE));
      if (done) break;
      if (Clock::now() >= grace_end) {
        FT_CHECK_MPI(MPI_Request_free(&request));
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }
}

}  // namespace ft
