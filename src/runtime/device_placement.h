// Which CUDA device each rank trains on, decided from what every rank sees: each rank takes its
// node-local rank modulo its visible devices, and ranks may not share a device beyond what the backend allows.
#pragma once

#include <string>
#include <vector>

#include "runtime/device_query.h"

namespace ft {

class World;

// What one rank reports: its node, NCCL's name for its host, node-local rank, CUDA_VISIBLE_DEVICES (as set,
// for messages) and the devices it sees, by visible index.
struct RankDevices {
  std::string host;
  // NCCL's host identity: NCCL_HOSTID when set, else the host name and the boot id (NCCL's host hash is a
  // hash of this text). Ranks of one node with distinct NCCL_HOSTID values are separate NCCL hosts.
  std::string nccl_host;
  bool nccl_host_given = false;  // NCCL_HOSTID set
  int local_rank = 0;
  bool visible_set = false;
  std::string visible_setting;
  std::vector<VisibleDevice> devices;
};

// What NCCL refuses at its initialisation: two ranks of one NCCL host on the same PCI bus id (NCCL before
// 2.30, so two MIG instances of one GPU too), on the same device identity (2.30 and later), or nothing
// (2.30 and later with NCCL_MULTI_RANK_GPU_ENABLE=1).
enum class NcclDuplicate { bus_id, identity, allowed };

// The rule of the NCCL that will run: its version code (NCCL_VERSION_CODE's encoding, 22809 for 2.28.9) and
// NCCL_MULTI_RANK_GPU_ENABLE as this process sees it (nullptr: unset).
NcclDuplicate nccl_duplicate_rule(int version_code, const char* multi_rank_gpu_enable);

struct PlacementRules {
  bool nccl = false;           // the backend is NCCL: NCCL's own rule (nccl_duplicate), nothing else
  bool allow_sharing = false;  // distributed.allow_device_sharing (MPI and Gloo)
  NcclDuplicate nccl_duplicate = NcclDuplicate::bus_id;
};

// One rank's device: its visible index (for cudaSetDevice) and the physical device's identity.
struct DevicePlacement {
  int index = -1;
  std::string identity;
  std::string bus_id;
  int visible = 0;  // how many devices the rank sees
};

// The placement of every rank (indexed by rank). Throws ft::Error naming the rank and node when a rank
// sees no device, and the node, ranks and device when ranks would share one without being allowed to:
// with MPI and Gloo, ranks of one node on one device unless sharing is allowed; with NCCL, exactly what
// NCCL would refuse. A pure function: every rank computes the same answer from the same reports.
std::vector<DevicePlacement> place_on_devices(const std::vector<RankDevices>& ranks, const PlacementRules& rules);

// With NCCL: the ranks that share one physical GPU of a node as separate NCCL hosts (distinct NCCL_HOSTID),
// whose traffic NCCL sends over its network transport, as one line for the log; "" when there are none.
std::string nccl_hosts_sharing_a_gpu(const std::vector<RankDevices>& ranks,
                                     const std::vector<DevicePlacement>& placed);

// This rank's report, from `devices` and the environment.
RankDevices describe_rank_devices(const World& world, const DeviceQuery& devices);

// NCCL's host identity of this process: NCCL_HOSTID (nullptr: unset), else `host_name` and `boot_id`.
std::string nccl_host_identity(const char* nccl_hostid, const std::string& host_name, const std::string& boot_id);

// Every rank's report, in rank order, through one allgather (collective: every rank calls it).
std::vector<RankDevices> gather_rank_devices(const World& world, const DeviceQuery& devices);

// gather_rank_devices, then place_on_devices: the same placements, or the same error, on every rank.
std::vector<DevicePlacement> place_world_on_devices(const World& world, const DeviceQuery& devices,
                                                    const PlacementRules& rules);

}  // namespace ft
