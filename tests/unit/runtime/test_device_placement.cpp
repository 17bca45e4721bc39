// Tests of runtime/device_query and runtime/device_placement: the CUDA_VISIBLE_DEVICES filter of the
// stand-in, and the placement rule for per-rank devices, shared visibility, sharing and NCCL.
#include "runtime/device_placement.h"

#include <gtest/gtest.h>

#include "runtime/device_query.h"
#include "runtime/error.h"

namespace ft {
namespace {

const std::vector<std::string> kNode = {"GPU-aaaa-1111", "GPU-bbbb-2222", "GPU-cccc-3333"};

// A rank of node `host` (NCCL host `host` + a boot id, as without NCCL_HOSTID) seeing `node`'s devices
// (IDENTITY[@BUS_ID] entries) through `visible`.
RankDevices rank_on(const std::string& host, int local_rank, const char* visible,
                    const std::vector<std::string>& node = kNode) {
  RankDevices rank;
  rank.host = host;
  rank.nccl_host = nccl_host_identity(nullptr, host, "-boot-1234");
  rank.local_rank = local_rank;
  rank.visible_set = visible != nullptr;
  rank.visible_setting = visible ? visible : "";
  std::string listed;
  for (const std::string& entry : node) listed += (listed.empty() ? "" : ",") + entry;
  rank.devices = listed_devices(listed, visible).devices();
  return rank;
}

// The same rank as a separate NCCL host: NCCL_HOSTID=`hostid`.
RankDevices as_nccl_host(RankDevices rank, const std::string& hostid) {
  rank.nccl_host = nccl_host_identity(hostid.c_str(), rank.host, "-boot-1234");
  rank.nccl_host_given = true;
  return rank;
}

PlacementRules nccl_rules(NcclDuplicate rule = NcclDuplicate::bus_id) { return {true, false, rule}; }

const std::vector<std::string> kMigNode = {"MIG-aaaa@0000:17:00.0", "MIG-bbbb@0000:17:00.0", "GPU-cccc@0000:65:00.0"};

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
  // Without a bus id the i-th physical device has 0000:<i+1>:00.0, whatever index it has in this process.
  EXPECT_EQ(seen.device(0).bus_id, "0000:02:00.0");
  EXPECT_EQ(listed_devices("GPU-aaaa,GPU-bbbb", nullptr).devices(),
            (std::vector<VisibleDevice>{{"GPU-aaaa", "0000:01:00.0"}, {"GPU-bbbb", "0000:02:00.0"}}));
  EXPECT_EQ(listed_devices("", nullptr).count(), 0);
  EXPECT_THROW(listed_devices("GPU-aaaa,GPU-aaaa", nullptr), Error);
  EXPECT_THROW(listed_devices("GPU-aaaa@", nullptr), Error);
  EXPECT_THROW(listed_devices("@0000:17:00.0", nullptr), Error);
}

TEST(VisibleDevices, StandInMigInstancesShareTheirGpusBusId) {
  const DeviceList seen = listed_devices("MIG-aaaa@0000:17:00.0,MIG-bbbb@0000:17:00.0,GPU-cccc@0000:65:00.0", "MIG-bbbb,2");
  EXPECT_EQ(seen.devices(), (std::vector<VisibleDevice>{{"MIG-bbbb", "0000:17:00.0"}, {"GPU-cccc", "0000:65:00.0"}}));
  // Two instances may share a bus id, never an identity.
  EXPECT_THROW(listed_devices("MIG-aaaa@0000:17:00.0,MIG-aaaa@0000:18:00.0", nullptr), Error);
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

// NCCL's own rule (init.cc of 2.28: "Duplicate GPU detected" when two ranks have the same host hash and the
// same PCI bus id; 2.30 compares the device's UUID instead, unless NCCL_MULTI_RANK_GPU_ENABLE is set).
TEST(NcclDuplicateRule, FollowsTheVersionAndTheMultiRankSwitch) {
  EXPECT_EQ(nccl_duplicate_rule(22809, nullptr), NcclDuplicate::bus_id);
  EXPECT_EQ(nccl_duplicate_rule(22999, "1"), NcclDuplicate::bus_id);  // the switch does not exist before 2.30
  EXPECT_EQ(nccl_duplicate_rule(23000, nullptr), NcclDuplicate::identity);
  EXPECT_EQ(nccl_duplicate_rule(23000, "1"), NcclDuplicate::allowed);
  EXPECT_EQ(nccl_duplicate_rule(23001, "2"), NcclDuplicate::allowed);
  EXPECT_EQ(nccl_duplicate_rule(23000, "0"), NcclDuplicate::identity);
  EXPECT_EQ(nccl_duplicate_rule(23000, ""), NcclDuplicate::identity);
  EXPECT_EQ(nccl_duplicate_rule(0, nullptr), NcclDuplicate::bus_id);
}

TEST(NcclHostIdentity, NcclHostidReplacesTheHostNameAndBootId) {
  EXPECT_EQ(nccl_host_identity(nullptr, "n1", "f00d-boot"), "n1f00d-boot");
  EXPECT_EQ(nccl_host_identity("rank-3", "n1", "f00d-boot"), "rank-3");
  EXPECT_EQ(nccl_host_identity("", "n1", "f00d-boot"), "");
}

TEST(DevicePlacement, NcclAcceptsSeparateNcclHostsOnOneGpu) {
  const std::vector<RankDevices> ranks = {as_nccl_host(rank_on("n1", 0, "0"), "h0"),
                                          as_nccl_host(rank_on("n1", 1, "0"), "h1")};
  const auto placed = place_on_devices(ranks, nccl_rules());
  EXPECT_EQ(placed[0].identity, "GPU-aaaa-1111");
  EXPECT_EQ(placed[1].identity, "GPU-aaaa-1111");
  const std::string note = nccl_hosts_sharing_a_gpu(ranks, placed);
  EXPECT_NE(note.find("node n1: ranks 0 (index 0) and 1 (index 0) on GPU-aaaa-1111"), std::string::npos) << note;
  EXPECT_NE(note.find("over its network transport"), std::string::npos) << note;
  // MPI and Gloo keep their own rule: one node, one device, sharing not allowed.
  EXPECT_NE(error_of(ranks, {false, false}).find("ranks would share a GPU"), std::string::npos);
}

TEST(DevicePlacement, NcclRefusesOneNcclHostOnOneBusIdWhateverTheNodes) {
  // One rank of each node names the same NCCL_HOSTID: NCCL sees one host, and bus 0000:01:00.0 twice.
  const std::vector<RankDevices> ranks = {as_nccl_host(rank_on("n1", 0, "0"), "same"),
                                          as_nccl_host(rank_on("n2", 0, "0"), "same")};
  const std::string refused = error_of(ranks, nccl_rules());
  EXPECT_NE(refused.find("NCCL host 'same' (NCCL_HOSTID): ranks 0 (index 0) and 1 (index 0) on GPU-aaaa-1111"),
            std::string::npos)
      << refused;
  // Three ranks, two of them one NCCL host: only those two are named.
  const std::vector<RankDevices> three = {as_nccl_host(rank_on("n1", 0, "0"), "h0"),
                                          as_nccl_host(rank_on("n1", 1, "0"), "h1"),
                                          as_nccl_host(rank_on("n1", 2, "0"), "h1")};
  const std::string named = error_of(three, nccl_rules());
  EXPECT_NE(named.find("ranks 1 (index 0) and 2 (index 0) on GPU-aaaa-1111"), std::string::npos) << named;
  EXPECT_EQ(named.find("ranks 0"), std::string::npos) << named;
  EXPECT_EQ(nccl_hosts_sharing_a_gpu(three, place_on_devices(three, nccl_rules(NcclDuplicate::allowed))), "");
}

TEST(DevicePlacement, NcclRefusesTwoMigInstancesOfOneGpu) {
  // Local ranks 0 and 1 see the whole node and take MIG-aaaa and MIG-bbbb: two identities, one bus id.
  const std::vector<RankDevices> ranks = {rank_on("n1", 0, nullptr, kMigNode), rank_on("n1", 1, nullptr, kMigNode)};
  const std::string refused = error_of(ranks, nccl_rules());
  EXPECT_NE(refused.find("node n1: ranks 0 (index 0) and 1 (index 1) on MIG-aaaa and MIG-bbbb, instances of one GPU "
                         "(PCI bus id 0000:17:00.0)"),
            std::string::npos)
      << refused;
  EXPECT_NE(refused.find("NCCL cannot run two ranks on one GPU"), std::string::npos) << refused;
  // NCCL 2.30 compares the instances' identities, and MPI or Gloo see two devices: both accept them.
  EXPECT_EQ(error_of(ranks, nccl_rules(NcclDuplicate::identity)), "");
  EXPECT_EQ(error_of(ranks, {false, false}), "");
  // The third device has a bus of its own: ranks 0 and 2 (MIG-aaaa, GPU-cccc) are accepted.
  EXPECT_EQ(error_of({rank_on("n1", 0, nullptr, kMigNode), rank_on("n1", 2, nullptr, kMigNode)}, nccl_rules()), "");
}

TEST(DevicePlacement, NcclSameIdentityRuleStillRefusesOneDevice) {
  const std::vector<RankDevices> ranks = {rank_on("n1", 0, "1"), rank_on("n1", 1, "GPU-bbbb")};
  EXPECT_NE(error_of(ranks, nccl_rules(NcclDuplicate::identity)).find("ranks 0 (index 0) and 1 (index 0) on GPU-bbbb-2222"),
            std::string::npos);
  EXPECT_EQ(error_of(ranks, nccl_rules(NcclDuplicate::allowed)), "");
}

TEST(DevicePlacement, ARankWithoutDevicesIsNamed) {
  const std::string refused = error_of({rank_on("n1", 0, "0"), rank_on("n2", 0, "")}, {false, true});
  EXPECT_NE(refused.find("rank 1 on node n2 (CUDA_VISIBLE_DEVICES='') sees no CUDA device"), std::string::npos)
      << refused;
}

}  // namespace
}  // namespace ft
