// Tests of plan/link_model.cpp against hand-worked cases: the ring's 2(p-1) latency terms and 2(p-1)/p of the
// bytes, recursive doubling's ceil(log2 p) exchanges, the size at which the backend switches, and the
// hierarchical all-reduce's three stages.
#include "plan/link_model.h"

#include <gtest/gtest.h>

#include <string>

#include "runtime/error.h"

namespace ft {
namespace {

constexpr double kMiB = 1048576;

TEST(LinkModel, RingTakesTwoPMinusOneLatenciesAndThatShareOfTheBytes) {
  const LinkLevel latency_only{1e-3, 0}, bandwidth_only{0, 1e-9};
  // p = 4: 6 steps of alpha; each rank sends 2 x 3/4 of the buffer.
  EXPECT_DOUBLE_EQ(ring_allreduce_s(4, 4e6, latency_only), 6e-3);
  EXPECT_DOUBLE_EQ(ring_allreduce_s(4, 4e6, bandwidth_only), 6e-3);
  // p = 2: 2 steps, the whole buffer once each way.
  EXPECT_DOUBLE_EQ(ring_allreduce_s(2, 4e6, LinkLevel{1e-5, 1e-9}), 2e-5 + 4e-3);
  // p = 8, both terms: 14 alpha + 14/8 n beta.
  EXPECT_DOUBLE_EQ(ring_allreduce_s(8, 8e6, LinkLevel{1e-5, 2e-9}), 14e-5 + 1.75 * 8e6 * 2e-9);
  EXPECT_EQ(ring_allreduce_s(1, 4e6, LinkLevel{1e-3, 1e-9}), 0);  // one rank: nothing to send
}

TEST(LinkModel, DoublingExchangesTheWholeBufferCeilLog2Times) {
  const LinkLevel link{1e-4, 1e-9};
  const double one = 1e-4 + 1e6 * 1e-9;
  EXPECT_EQ(doubling_allreduce_s(1, 1e6, link), 0);
  EXPECT_DOUBLE_EQ(doubling_allreduce_s(2, 1e6, link), one);
  EXPECT_DOUBLE_EQ(doubling_allreduce_s(3, 1e6, link), 2 * one);
  EXPECT_DOUBLE_EQ(doubling_allreduce_s(4, 1e6, link), 2 * one);
  EXPECT_DOUBLE_EQ(doubling_allreduce_s(5, 1e6, link), 3 * one);
  EXPECT_DOUBLE_EQ(doubling_allreduce_s(1024, 1e6, link), 10 * one);
  // Its own latency where the level has one; the ring keeps alpha.
  const LinkLevel rendezvous{1e-4, 1e-9, 5e-3};
  EXPECT_DOUBLE_EQ(doubling_allreduce_s(4, 1e6, rendezvous), 2 * (5e-3 + 1e-3));
  EXPECT_DOUBLE_EQ(ring_allreduce_s(4, 1e6, rendezvous), ring_allreduce_s(4, 1e6, link));
}

TEST(LinkModel, TheRingStartsExactlyAtItsThreshold) {
  const LinkLevel link{1e-4, 1e-9};
  LinkModel model;
  model.ring_min_bytes = kMiB;
  EXPECT_DOUBLE_EQ(level_allreduce_s(4, kMiB, link, model), ring_allreduce_s(4, kMiB, link));
  EXPECT_DOUBLE_EQ(level_allreduce_s(4, kMiB - 1, link, model), doubling_allreduce_s(4, kMiB - 1, link));
  model.ring_min_bytes = 0;  // ring always
  EXPECT_DOUBLE_EQ(level_allreduce_s(4, 1, link, model), ring_allreduce_s(4, 1, link));
  model.ring_min_bytes = -1;  // MPI_Iallreduce always
  EXPECT_DOUBLE_EQ(level_allreduce_s(4, 64 * kMiB, link, model), doubling_allreduce_s(4, 64 * kMiB, link));
}

TEST(LinkModel, FlatRunsAtTheSlowestHop) {
  LinkModel model;
  model.intra = {1e-6, 1e-10};
  model.inter = {1e-5, 1e-9};
  // 2 nodes x 4 ranks: one ring of 8 whose every step waits for a hop between nodes.
  EXPECT_DOUBLE_EQ(flat_allreduce_s({2, 4}, 8e6, model), 14 * 1e-5 + 14.0 / 8 * 8e6 * 1e-9);
  // 1 node x 4 ranks: inside the node only.
  EXPECT_DOUBLE_EQ(flat_allreduce_s({1, 4}, 8e6, model), 6 * 1e-6 + 1.5 * 8e6 * 1e-10);
  EXPECT_EQ(flat_allreduce_s({1, 1}, 8e6, model), 0);
}

TEST(LinkModel, HierarchicalReducesRingsAndBroadcasts) {
  LinkModel model;
  model.intra = {1e-6, 1e-10};
  model.inter = {1e-5, 1e-9};
  const double n = 8e6;
  // 4 nodes x 8: reduce and broadcast of 3 tree levels each inside a node, a ring of 4 leaders between them.
  const double stage = 3 * 1e-6 + n * 1e-10, ring = 6 * 1e-5 + 1.5 * n * 1e-9;
  EXPECT_DOUBLE_EQ(hierarchical_allreduce_s({4, 8}, n, model), 2 * stage + ring);
  // One rank per node: the leaders' ring alone, the flat ring of the same ranks.
  EXPECT_DOUBLE_EQ(hierarchical_allreduce_s({4, 1}, n, model), flat_allreduce_s({4, 1}, n, model));
  // One node: the two stages inside it, nothing between nodes.
  EXPECT_DOUBLE_EQ(hierarchical_allreduce_s({1, 2}, n, model), 2 * (1e-6 + n * 1e-10));
  EXPECT_DOUBLE_EQ(tree_stage_s(1, n, model.intra), 0);
  EXPECT_DOUBLE_EQ(tree_stage_s(5, n, model.intra), 3 * 1e-6 + n * 1e-10);
}

TEST(LinkModel, ALevelFromADataSheet) {
  const LinkLevel roce = parse_link_level("25:5", "--inter");
  EXPECT_DOUBLE_EQ(roce.alpha_s, 5e-6);
  EXPECT_DOUBLE_EQ(roce.beta_s_per_byte, 8 / 25e9);  // 25 Gbit/s: 0.32 ns a byte
  EXPECT_EQ(parse_link_level("0.1", "--inter").alpha_s, 0);
  EXPECT_DOUBLE_EQ(parse_link_level("0.1", "--inter").beta_s_per_byte, 8e-8);
  for (const char* bad : {"", "0", "-1:5", "25:", "25:-1", "fast", "25:5us", "25x"}) {
    try {
      parse_link_level(bad, "--inter");
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const Error& e) {
      EXPECT_EQ(std::string(e.what()).rfind(std::string("--inter: '") + bad + "' is not GBIT or GBIT:US", 0), 0u)
          << e.what();
    }
  }
}

TEST(LinkModel, MachineCpuIsEveryRanksBytesSentTimesItsLevelsCost) {
  LinkModel model;  // the ring at every size
  model.inter = {0, 1e-9, -1, 2e-9, 2};
  model.intra = {0, 1e-10, -1, 1e-9, 2};
  const double n = 1e6;
  EXPECT_DOUBLE_EQ(level_sent_bytes(4, n, model), 1.5e6);  // 2 x 3/4 of the buffer
  EXPECT_DOUBLE_EQ(level_sent_bytes(2, n, model), n);
  EXPECT_EQ(level_sent_bytes(1, n, model), 0);
  // Flat, 4 nodes: 4 ranks x 1.5e6 bytes x 2 ns; 2 nodes: 2 x 1e6 x 2 ns; one node of 4 at the intra level's 1 ns.
  EXPECT_DOUBLE_EQ(allreduce_machine_cpu_s({4, 1}, false, n, model), 0.012);
  EXPECT_DOUBLE_EQ(allreduce_machine_cpu_s({2, 1}, false, n, model), 0.004);
  EXPECT_DOUBLE_EQ(allreduce_machine_cpu_s({1, 4}, false, n, model), 0.006);
  EXPECT_EQ(allreduce_machine_cpu_s({1, 1}, false, n, model), 0);
  // Hierarchical 2 x 4: per node 3 ranks send the buffer in the reduce and 3 copies go out in the broadcast
  // (2 x 6e6 x 1 ns), then the 2 leaders' ring (2 x 1e6 x 2 ns).
  EXPECT_DOUBLE_EQ(allreduce_machine_cpu_s({2, 4}, true, n, model), 0.012 + 0.004);
  EXPECT_DOUBLE_EQ(allreduce_machine_cpu_s({2, 1}, true, n, model), 0.004);  // one rank a node: the ring only
  // Below the ring's size, recursive doubling: 4 ranks each send the whole buffer twice.
  model.ring_min_bytes = 2 * n;
  EXPECT_DOUBLE_EQ(allreduce_machine_cpu_s({4, 1}, false, n, model), 4 * 2 * n * 2e-9);
  // A level whose CPU was not measured (no cost, or no cores counted) adds nothing.
  model.inter.cpu_cores = 0;
  EXPECT_EQ(allreduce_machine_cpu_s({4, 1}, false, n, model), 0);
  EXPECT_DOUBLE_EQ(allreduce_machine_cpu_s({2, 4}, true, n, model), 0.012);
  model.intra.cpu_s_per_byte = 0;
  EXPECT_EQ(allreduce_machine_cpu_s({1, 4}, false, n, model), 0);
}

TEST(LinkModel, TopologyNamesAndCounts) {
  EXPECT_EQ(Topology({128, 8}).ranks(), 1024);
  EXPECT_EQ(Topology({4, 2}).name(), "4 x 2");
}

}  // namespace
}  // namespace ft
