// Tests of runtime/device_query and runtime/device_placement: the CUDA_VISIBLE_DEVICES filter of the
// stand-in, and the placement rule for per-rank devices, shared visibility, sharing and NCCL.
#include "runtime/device_placement.h"

#include <gtest/gtest.h>

#include "runtime/device_query.h"
#include "runtime/error.h"

namespace ft {
namespace {

const std::vector<std::string> kNode = {"GPU-aaaa-1111", "GPU-bbbb-2222", "GPU-cccc-3333"};

RankDevices rank_on(const std::string& host, int local_rank, const char* visible,
                    const std::vector<std::string>& node = kNode) {
  RankDevices rank;
  rank.host = host;
  rank.local_rank = local_rank;
  rank.visible_set = visible != nullptr;
  rank.visible_setting = visible ? visible : "";
  rank.identities = select_visible(node, visible);
  return rank;
}

std::string error_of(const std::vector<RankDevices>& ranks, const PlacementRules& rules) {
  try {
    place_on_devices(ranks, rules);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(VisibleDevices, FiltersByIndexAndUuidPrefixAsCudaDoes) {
  EXPECT_EQ(select_visible(kNode, nullptr), kNode);
  EXPECT_TRUE(select_visible(kNode, "").empty());
  EXPECT_EQ(select_visible(kNode, "2,0"), (std::vector<std::string>{"GPU-cccc-3333", "GPU-aaaa-1111"}));
  EXPECT_EQ(select_visible(kNode, "GPU-bbbb"), (std::vector<std::string>{"GPU-bbbb-2222"}));
  EXPECT_EQ(select_visible(kNode, " 1 , GPU-cccc-3333"), (std::vector<std::string>{"GPU-bbbb-2222", "GPU-cccc-3333"}));
  // The list ends at the first entry that is out of range, repeated, ambiguous or not a device.
  EXPECT_EQ(select_visible(kNode, "1,7,0"), (std::vector<std::string>{"GPU-bbbb-2222"}));
  EXPECT_EQ(select_visible(kNode, "0,0,1"), (std::vector<std::string>{"GPU-aaaa-1111"}));
  EXPECT_TRUE(select_visible(kNode, "GPU-").empty());
  EXPECT_TRUE(select_visible(kNode, "-1").empty());
  EXPECT_TRUE(select_visible(kNode, "NoDevFiles").empty());
}

TEST(VisibleDevices, StandInListsTheDevicesThisProcessSees) {
  const DeviceList seen = listed_devices("GPU-aaaa,GPU-bbbb", "1");
  ASSERT_EQ(seen.count(), 1);
  EXPECT_EQ(seen.identity(0), "GPU-bbbb");
  EXPECT_EQ(listed_devices("GPU-aaaa,GPU-bbbb", nullptr).identities(),
            (std::vector<std::string>{"GPU-aaaa", "GPU-bbbb"}));
  EXPECT_EQ(listed_devices("", nullptr).count(), 0);
  EXPECT_THROW(listed_devices("GPU-aaaa,GPU-aaaa", nullptr), Error);
}

TEST(DevicePlacement, OneDevicePerRankFromCudaVisibleDevices) {
  // What Slurm's --gpus-per-task=1 hands over: each task sees only its own GPU, at index 0.
  const auto placed = place_on_devices({rank_on("n1", 0, "0"), rank_on("n1", 1, "1")}, {true, false});
  EXPECT_EQ(placed[0].index, 0);
  EXPECT_EQ(placed[1].index, 0);
  EXPECT_EQ(placed[0].identity, "GPU-aaaa-1111");
  EXPECT_EQ(placed[1].identity, "GPU-bbbb-2222");
  EXPECT_EQ(placed[1].visible, 1);
}

TEST(DevicePlacement, LocalRankPicksAmongAllVisibleDevices) {
  const auto placed = place_on_devices({rank_on("n1", 0, nullptr), rank_on("n1", 1, nullptr),
                                        rank_on("n2", 0, nullptr), rank_on("n2", 1, nullptr)},
                                       {true, false});
  EXPECT_EQ(placed[1].index, 1);
  EXPECT_EQ(placed[1].identity, "GPU-bbbb-2222");
  // The same UUIDs on two nodes (the stand-in's list) are different devices.
  EXPECT_EQ(placed[2].identity, "GPU-aaaa-1111");
  EXPECT_EQ(placed[3].visible, 3);
}

TEST(DevicePlacement, TwoRanksOnOneDeviceNeedAllowSharing) {
  // Both ranks see the same single GPU: local rank 1 wraps round to index 0.
  const std::vector<RankDevices> ranks = {rank_on("n1", 0, "GPU-cccc"), rank_on("n1", 1, "2")};
  const std::string refused = error_of(ranks, {false, false});
  EXPECT_NE(refused.find("node n1: ranks 0 (index 0) and 1 (index 0) on GPU-cccc-3333"), std::string::npos)
      << refused;
  EXPECT_NE(refused.find("distributed.allow_device_sharing: true"), std::string::npos) << refused;
  const auto shared = place_on_devices(ranks, {false, true});
  EXPECT_EQ(shared[0].identity, shared[1].identity);
  EXPECT_EQ(shared[1].index, 0);
}

TEST(DevicePlacement, DifferentIndicesOfOnePhysicalDeviceAreSharing) {
  // Rank 0 takes index 0 of "1,0", rank 1 index 1 of "0,1": different indices, both GPU-bbbb.
  const std::vector<std::string> node = {"GPU-aaaa", "GPU-bbbb"};
  const std::vector<RankDevices> ranks = {rank_on("n1", 0, "1,0", node), rank_on("n1", 1, "0,1", node)};
  const std::string refused = error_of(ranks, {false, false});
  EXPECT_NE(refused.find("node n1: ranks 0 (index 0) and 1 (index 1) on GPU-bbbb"), std::string::npos) << refused;
  const auto placed = place_on_devices(ranks, {false, true});
  EXPECT_EQ(placed[0].identity, "GPU-bbbb");
  EXPECT_EQ(placed[1].identity, "GPU-bbbb");
}

TEST(DevicePlacement, NcclRefusesASharedDeviceEvenWhenAllowed) {
  const std::vector<RankDevices> ranks = {rank_on("n1", 0, "0"), rank_on("n1", 1, "0")};
  const std::string refused = error_of(ranks, {true, true});
  EXPECT_NE(refused.find("node n1: ranks 0 (index 0) and 1 (index 0) on GPU-aaaa-1111"), std::string::npos)
      << refused;
  EXPECT_NE(refused.find("NCCL cannot run two ranks on one GPU"), std::string::npos) << refused;
}

TEST(DevicePlacement, ARankWithoutDevicesIsNamed) {
  const std::string refused = error_of({rank_on("n1", 0, "0"), rank_on("n2", 0, "")}, {false, true});
  EXPECT_NE(refused.find("rank 1 on node n2 (CUDA_VISIBLE_DEVICES='') sees no CUDA device"), std::string::npos)
      << refused;
}

}  // namespace
}  // namespace ft
