// Tests of describe_suspects (comm/stall_inspector.cpp), the part of a stall message that names ranks: each
// kind of suspect in its words, this rank left out, and the cut after eight names at 8, 9 and 10 suspects.
#include "comm/stall_inspector.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "comm/stall_heartbeat.h"

namespace ft {
namespace {

constexpr double kSilentAfter = 2.0;

std::vector<std::string> hosts_of(int ranks) {
  std::vector<std::string> hosts;
  for (int r = 0; r < ranks; ++r) hosts.push_back("h" + std::to_string(r));
  return hosts;
}

// A peer silent long enough to be reported, heard from once.
PeerStatus silent_peer() {
  PeerStatus peer;
  peer.heard = true;
  peer.silent_s = 3.25;
  return peer;
}

TEST(DescribeSuspects, EachKindOfSuspectInItsWords) {
  std::vector<PeerStatus> peers(6);  // rank 0 is this one, at collective #5
  peers[1] = silent_peer();
  peers[2].silent_s = kSilentAfter;  // exactly the threshold, never heard
  peers[3].started = 0;
  peers[4].started = 4, peers[4].finished = 4;
  peers[5].started = 4, peers[5].finished = 3;
  std::vector<int> suspects;
  EXPECT_EQ(describe_suspects(peers, hosts_of(6), 0, 5, kSilentAfter, &suspects),
            "rank 1 (h1) not heard from for 3.2 s (dead or hung); "
            "rank 2 (h2) not heard from since the backend started 2.0 s ago (dead or hung); "
            "rank 3 (h3) has not started any collective (behind); "
            "rank 4 (h4) is idle after collective #4 (behind); "
            "rank 5 (h5) is at collective #4 (behind)");
  EXPECT_EQ(suspects, (std::vector<int>{1, 2, 3, 4, 5}));
}

TEST(DescribeSuspects, PeersAtOrPastThisRankAndHeardRecentlyAreNoSuspects) {
  std::vector<PeerStatus> peers(4);
  peers[0] = silent_peer();  // this rank: never its own suspect
  peers[1].started = 5, peers[1].silent_s = kSilentAfter - 0.01;
  peers[2].started = 6;
  peers[3].started = 5, peers[3].finished = 5;
  std::vector<int> suspects;
  EXPECT_EQ(describe_suspects(peers, hosts_of(4), 0, 5, kSilentAfter, &suspects), "");
  EXPECT_TRUE(suspects.empty());
  EXPECT_EQ(describe_suspects(peers, hosts_of(4), 0, 5, kSilentAfter, nullptr), "");
}

// Ranks 1..n all silent, seen from rank 0: how the message ends.
std::string tail_with(int silent, std::vector<int>* suspects) {
  std::vector<PeerStatus> peers(silent + 1, silent_peer());
  const std::string text = describe_suspects(peers, hosts_of(silent + 1), 0, 1, kSilentAfter, suspects);
  return text.substr(text.rfind("rank "));
}

TEST(DescribeSuspects, EightAreNamedAndTheRestCounted) {
  std::vector<int> suspects;
  EXPECT_EQ(tail_with(8, &suspects), "rank 8 (h8) not heard from for 3.2 s (dead or hung)");
  EXPECT_EQ(suspects.size(), 8u);
  suspects.clear();
  EXPECT_EQ(tail_with(9, &suspects), "rank 8 (h8) not heard from for 3.2 s (dead or hung); and 1 more ranks like these");
  EXPECT_EQ(suspects.size(), 9u) << "every suspect is returned, named or not";
  suspects.clear();
  EXPECT_EQ(tail_with(10, &suspects), "rank 8 (h8) not heard from for 3.2 s (dead or hung); and 2 more ranks like these");
  EXPECT_EQ(suspects.back(), 10);
}

}  // namespace
}  // namespace ft
