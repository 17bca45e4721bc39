// Stall diagnosis for every backend: numbers collectives, records what the engine called them, and on a
// timeout compares this rank's position with what the heartbeat last heard from the others.
#include "comm/stall_inspector.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <thread>
#include <utility>

#include "comm/stall_heartbeat.h"
#include "runtime/world.h"

namespace ft {
namespace {

thread_local std::string t_label;

// Stall messages name at most this many ranks (a whole rack gone would otherwise fill the screen).
constexpr int kMaxNamed = 8;

// A peer not heard from for this long is reported silent (several heartbeat periods, never less than 2 s).
double silence_threshold_s(double period_s) { return std::max(2.0, 4 * period_s); }

std::string seconds(double s) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f s", s);
  return text;
}

}  // namespace

CollectiveLabel::CollectiveLabel(std::string text) : previous_(std::exchange(t_label, std::move(text))) {}

CollectiveLabel::~CollectiveLabel() { t_label = std::move(previous_); }

const std::string& CollectiveLabel::current() { return t_label; }

std::string format_bytes(std::size_t bytes) {
  static const char* const kUnits[] = {"KiB", "MiB", "GiB", "TiB"};
  if (bytes < 1024) return cat(bytes, " B");
  double value = static_cast<double>(bytes) / 1024;
  int unit = 0;
  while (value >= 1024 && unit < 3) {
    value /= 1024;
    ++unit;
  }
  char text[32];
  std::snprintf(text, sizeof text, "%.1f %s", value, kUnits[unit]);
  return text;
}

StallInspector::StallInspector(const World& world, std::string backend, double timeout_s)
    : backend_(std::move(backend)), timeout_s_(timeout_s), rank_(world.rank()) {
  FT_REQUIRE(world.size() == 1 || world.thread_multiple(), "the ", backend_,
             " backend needs MPI initialised with MPI_THREAD_MULTIPLE (the engine's communication thread "
             "and the stall heartbeat call MPI beside the main thread), but this MPI library did not provide "
             "it; use an MPI built with thread support (Open MPI, MPICH and their derivatives are by default)");
  transport_ = backend_;
  hosts_ = world.allgather(world.hostname());
  heartbeat_ = std::make_unique<Heartbeat>(world, started_, finished_);
}

StallInspector::~StallInspector() = default;

std::uint64_t StallInspector::begin(const char* kind, std::size_t bytes, const char* transport) {
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    kind_ = kind;
    bytes_ = bytes;
    label_ = CollectiveLabel::current();
    transport_ = transport;
  }
  return ++started_;
}

void StallInspector::end() { finished_ = started_.load(); }

std::string StallInspector::current() const {
  const std::lock_guard<std::mutex> lock(mutex_);
  std::string detail = label_.empty() ? "" : label_ + ", ";
  return cat(kind_, " #", started_.load(), " (", detail, format_bytes(bytes_), ", ", transport_, ")");
}

std::string describe_suspects(const std::vector<PeerStatus>& peers, const std::vector<std::string>& hosts, int self,
                              std::uint64_t mine, double silent_after_s, std::vector<int>* suspects) {
  std::string out;
  int named = 0, unnamed = 0;
  auto add = [&](int rank, const std::string& what) {
    if (suspects) suspects->push_back(rank);
    if (named == kMaxNamed) {
      ++unnamed;
      return;
    }
    out += cat(out.empty() ? "" : "; ", "rank ", rank, " (", hosts[rank], ") ", what);
    ++named;
  };
  for (int r = 0; r < static_cast<int>(peers.size()); ++r) {
    if (r == self) continue;
    const PeerStatus& peer = peers[r];
    if (peer.silent_s >= silent_after_s) {
      add(r, peer.heard ? cat("not heard from for ", seconds(peer.silent_s), " (dead or hung)")
                        : cat("not heard from since the backend started ", seconds(peer.silent_s),
                              " ago (dead or hung)"));
    } else if (peer.started < mine) {
      if (peer.started == 0)
        add(r, "has not started any collective (behind)");
      else if (peer.finished == peer.started)
        add(r, cat("is idle after collective #", peer.started, " (behind)"));
      else
        add(r, cat("is at collective #", peer.started, " (behind)"));
    }
  }
  if (unnamed > 0) out += cat("; and ", unnamed, " more ranks like these");
  return out;
}

std::string StallInspector::diagnose(std::vector<int>* suspects) const {
  std::string out = describe_suspects(heartbeat_->peers(), hosts_, rank_, started_.load(),
                                      silence_threshold_s(heartbeat_->period_s()), suspects);
  if (out.empty())
    out = "every rank has started it, so the transfer itself is stuck or slow (network, a peer's "
          "device, or ranks that disagree on its size or type)";
  const std::string failure = heartbeat_->failure();
  if (!failure.empty()) out += cat(" (the stall heartbeat stopped early, so this may be stale: ", failure, ")");
  return out;
}

StallError StallInspector::stall_error(double waited_s, const std::string& detail) const {
  return stall_error(current(), waited_s, detail);
}

bool StallInspector::any_silent() const {
  const std::vector<PeerStatus> peers = heartbeat_->peers();
  const double silent_after = silence_threshold_s(heartbeat_->period_s());
  for (int r = 0; r < static_cast<int>(peers.size()); ++r)
    if (r != rank_ && peers[r].silent_s >= silent_after) return true;
  return false;
}

StallError StallInspector::peer_lost_error(const std::string& detail) const {
  const auto start = std::chrono::steady_clock::now();
  const double period = heartbeat_->period_s();
  const double bound = std::min(timeout_s_, silence_threshold_s(period) + 2 * period);
  const auto waited = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); };
  while (!any_silent() && waited() < bound) std::this_thread::sleep_for(std::chrono::duration<double>(period / 4));
  std::vector<int> suspects;
  std::string message = cat(current(), " failed: the ", backend_, " transport lost a peer: ", diagnose(&suspects),
                            " [", backend_, ": ", detail, "]");
  return StallError(message, std::move(suspects));
}

StallError StallInspector::stall_error(const std::string& subject, double waited_s,
                                       const std::string& detail) const {
  std::vector<int> suspects;
  std::string message = cat(subject, " waited ", seconds(waited_s), ": ", diagnose(&suspects));
  if (!detail.empty()) message += cat(" [", backend_, ": ", detail, "]");
  return StallError(message, std::move(suspects));
}

}  // namespace ft
