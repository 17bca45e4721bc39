// Which CUDA device each rank trains on, decided from what every rank sees: each rank takes its
// node-local rank modulo its visible devices, and ranks of one node may not land on one physical device.
#pragma once

#include <string>
#include <vector>

namespace ft {

class DeviceQuery;
class World;

// What one rank reports: its node, node-local rank, CUDA_VISIBLE_DEVICES (as set, for messages) and the
// identities of the devices it sees, by visible index.
struct RankDevices {
  std::string host;
  int local_rank = 0;
  bool visible_set = false;
  std::string visible_setting;
  std::vector<std::string> identities;
};

struct PlacementRules {
  bool nccl = false;           // the backend is NCCL: never two ranks on one device
  bool allow_sharing = false;  // distributed.allow_device_sharing
};

// One rank's device: its visible index (for cudaSetDevice) and the physical device's identity.
struct DevicePlacement {
  int index = -1;
  std::string identity;
  int visible = 0;  // how many devices the rank sees
};

// The placement of every rank (indexed by rank). Throws ft::Error naming the rank and node when a rank
// sees no device, and the node, ranks and device when ranks would share one without being allowed to
// (always with NCCL). A pure function: every rank computes the same answer from the same reports.
std::vector<DevicePlacement> place_on_devices(const std::vector<RankDevices>& ranks, const PlacementRules& rules);

// This rank's report, from `devices` and the environment.
RankDevices describe_rank_devices(const World& world, const DeviceQuery& devices);

// Every rank's report, in rank order, through one allgather (collective: every rank calls it).
std::vector<RankDevices> gather_rank_devices(const World& world, const DeviceQuery& devices);

// gather_rank_devices, then place_on_devices: the same placements, or the same error, on every rank.
std::vector<DevicePlacement> place_world_on_devices(const World& world, const DeviceQuery& devices,
                                                    const PlacementRules& rules);

}  // namespace ft
