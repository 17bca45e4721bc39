// Device placement on real ranks: each rank reports its own stand-in device list (the node's devices
// filtered by its own CUDA_VISIBLE_DEVICES setting) through the real gather, and all ranks agree.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "mpi_env.h"
#include "runtime/device_placement.h"
#include "runtime/device_query.h"
#include "runtime/error.h"

namespace ft {
namespace {

// "GPU-0000,GPU-0001,...": one device per rank of this node.
std::string node_devices() {
  std::string listed;
  for (int i = 0; i < test::world().local_size(); ++i) listed += (i ? ",GPU-000" : "GPU-000") + std::to_string(i);
  return listed;
}

// The error every rank gets, or "" when placement succeeds; checks that all ranks agree on it.
std::string placement_error(const DeviceQuery& devices, const PlacementRules& rules) {
  std::string message;
  try {
    place_world_on_devices(test::world(), devices, rules);
  } catch (const Error& e) {
    message = e.what();
  }
  const std::vector<std::string> all = test::world().allgather(message);
  for (const std::string& other : all) EXPECT_EQ(other, message) << "ranks disagree on the placement";
  return message;
}

TEST(Placement, EachRankOnItsOwnVisibleDevice) {
  const World& world = test::world();
  const std::string mine = std::to_string(world.local_rank());
  const DeviceList devices = listed_devices(node_devices(), mine.c_str());
  const auto placed = place_world_on_devices(world, devices, {true, false});
  ASSERT_EQ(static_cast<int>(placed.size()), world.size());
  for (int r = 0; r < world.size(); ++r) {
    EXPECT_EQ(placed[r].index, 0);
    EXPECT_EQ(placed[r].visible, 1);
  }
  EXPECT_EQ(placed[world.rank()].identity, "GPU-000" + mine);
}

TEST(Placement, LocalRankPicksAmongAllDevices) {
  const World& world = test::world();
  const auto placed = place_world_on_devices(world, listed_devices(node_devices(), nullptr), {true, false});
  EXPECT_EQ(placed[world.rank()].index, world.local_rank());
  EXPECT_EQ(placed[world.rank()].identity, "GPU-000" + std::to_string(world.local_rank()));
}

TEST(Placement, OneDeviceForAllRanksNeedsSharing) {
  const World& world = test::world();
  if (world.local_size() < 2) GTEST_SKIP() << "one rank per node shares nothing";
  const DeviceList first = listed_devices(node_devices(), "0");
  const std::string refused = placement_error(first, {false, false});
  EXPECT_NE(refused.find("ranks 0 (index 0) and 1 (index 0)"), std::string::npos) << refused;
  EXPECT_NE(refused.find("on GPU-0000"), std::string::npos) << refused;
  EXPECT_EQ(placement_error(first, {false, true}), "");
  const auto placed = place_world_on_devices(world, first, {false, true});
  for (const auto& p : placed) EXPECT_EQ(p.identity, "GPU-0000");
}

TEST(Placement, NcclRefusesASharedDevice) {
  if (test::world().local_size() < 2) GTEST_SKIP() << "one rank per node shares nothing";
  const std::string refused = placement_error(listed_devices(node_devices(), "0"), {true, true});
  EXPECT_NE(refused.find("NCCL cannot run two ranks on one GPU"), std::string::npos) << refused;
}

// Each rank its own NCCL host (NCCL_HOSTID), all on device 0: NCCL accepts them, and so does the placement,
// with the line that says their traffic goes over the network transport; the reports cross the real gather.
TEST(Placement, SeparateNcclHostsShareOneDevice) {
  const World& world = test::world();
  if (world.local_size() < 2) GTEST_SKIP() << "one rank per node shares nothing";
  const DeviceList first = listed_devices(node_devices(), "0");
  ::setenv("NCCL_HOSTID", ("fusetrain-rank-" + std::to_string(world.rank())).c_str(), 1);
  const std::vector<RankDevices> ranks = gather_rank_devices(world, first);
  ::unsetenv("NCCL_HOSTID");
  ASSERT_EQ(static_cast<int>(ranks.size()), world.size());
  EXPECT_EQ(ranks[1].nccl_host, "fusetrain-rank-1");
  EXPECT_TRUE(ranks[1].nccl_host_given);
  EXPECT_EQ(ranks[0].devices, (std::vector<VisibleDevice>{{"GPU-0000", "0000:01:00.0"}}));
  const auto placed = place_on_devices(ranks, {true, false, NcclDuplicate::bus_id});
  const std::string note = nccl_hosts_sharing_a_gpu(ranks, placed);
  EXPECT_NE(note.find("ranks 0 (index 0) and 1 (index 0)"), std::string::npos) << note;
  // Without NCCL_HOSTID the ranks of one node are one NCCL host (the host name and boot id): refused.
  EXPECT_NE(placement_error(first, {true, false, NcclDuplicate::bus_id}).find("NCCL cannot run two ranks on one GPU"),
            std::string::npos);
}

// Each rank's own CUDA_VISIBLE_DEVICES crosses the gather as the rank saw it: unset (rank 0), set but empty (odd
// ranks) or set to a list (even ranks past 0); the NCCL host is the host name and boot id without NCCL_HOSTID.
TEST(Placement, EachRanksVisibleDevicesSettingCrossesTheGather) {
  const World& world = test::world();
  const char* before = std::getenv("CUDA_VISIBLE_DEVICES");
  const std::string kept = before ? before : "";
  auto setting_of = [](int r) { return r % 2 ? std::string() : "GPU-" + std::to_string(r) + ",1"; };
  if (world.rank() == 0) {
    ::unsetenv("CUDA_VISIBLE_DEVICES");
  } else {
    ::setenv("CUDA_VISIBLE_DEVICES", setting_of(world.rank()).c_str(), 1);
  }
  const std::vector<RankDevices> ranks = gather_rank_devices(world, listed_devices(node_devices(), nullptr));
  if (before) ::setenv("CUDA_VISIBLE_DEVICES", kept.c_str(), 1);
  else ::unsetenv("CUDA_VISIBLE_DEVICES");
  ASSERT_EQ(static_cast<int>(ranks.size()), world.size());
  EXPECT_FALSE(ranks[0].visible_set);
  EXPECT_EQ(ranks[0].visible_setting, "");
  for (int r = 1; r < world.size(); ++r) {
    EXPECT_TRUE(ranks[r].visible_set) << "rank " << r;
    EXPECT_EQ(ranks[r].visible_setting, setting_of(r)) << "rank " << r;
  }
  for (int r = 0; r < world.size(); ++r) EXPECT_FALSE(ranks[r].nccl_host_given) << "rank " << r;
  EXPECT_EQ(ranks[world.rank()].local_rank, world.local_rank());
  EXPECT_EQ(ranks[world.rank()].host, world.hostname());
}

TEST(Placement, ARankThatSeesNoDeviceIsNamed) {
  const World& world = test::world();
  if (world.size() < 2) GTEST_SKIP() << "needs a second rank";
  const char* visible = world.rank() == 1 ? "" : nullptr;
  const std::string refused = placement_error(listed_devices(node_devices(), visible), {false, false});
  // The message quotes the rank's real CUDA_VISIBLE_DEVICES; the stand-in's filter stood in for it here.
  EXPECT_NE(refused.find("but rank 1 on node " + world.hostname() + " (CUDA_VISIBLE_DEVICES"), std::string::npos)
      << refused;
  EXPECT_NE(refused.find(") sees no CUDA device"), std::string::npos) << refused;
  EXPECT_EQ(refused.find("rank 0 on node"), std::string::npos) << refused;
}

}  // namespace
}  // namespace ft
