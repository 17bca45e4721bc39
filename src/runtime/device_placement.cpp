// The device placement rule and its one gather: ranks report what they see, and every rank applies the
// same rule to all reports, so that a bad placement stops every rank with the same message.
#include "runtime/device_placement.h"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>

#include "runtime/error.h"
#include "runtime/host_name.h"
#include "runtime/world.h"

namespace ft {
namespace {

std::string describe_setting(const RankDevices& rank) {
  return rank.visible_set ? cat("CUDA_VISIBLE_DEVICES='", rank.visible_setting, "'") : "CUDA_VISIBLE_DEVICES unset";
}

// "rank 1 on node n1 (CUDA_VISIBLE_DEVICES='')" for every rank that sees no device; empty if none.
std::string ranks_without_devices(const std::vector<RankDevices>& ranks) {
  std::string named;
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    if (!ranks[r].devices.empty()) continue;
    named += cat(named.empty() ? "" : ", ", "rank ", r, " on node ", ranks[r].host, " (", describe_setting(ranks[r]), ")");
  }
  return named;
}

// Ranks grouped by `key` (in key order), only the groups of two or more.
template <typename Key>
std::vector<std::vector<std::size_t>> shared_groups(std::size_t count, Key&& key) {
  std::map<decltype(key(std::size_t{0})), std::vector<std::size_t>> users;
  for (std::size_t r = 0; r < count; ++r) users[key(r)].push_back(r);
  std::vector<std::vector<std::size_t>> groups;
  for (auto& entry : users)
    if (entry.second.size() > 1) groups.push_back(std::move(entry.second));
  return groups;
}

// "ranks 0 (index 0) and 1 (index 1)": the members with the visible index each took.
std::string rank_list(const std::vector<std::size_t>& members, const std::vector<DevicePlacement>& placed) {
  std::string list;
  for (std::size_t i = 0; i < members.size(); ++i)
    list += cat(i == 0 ? "" : i + 1 == members.size() ? " and " : ", ", members[i], " (index ",
                placed[members[i]].index, ")");
  return cat("ranks ", list);
}

// The device of a group: "GPU-aaaa", or, for instances of one GPU, "MIG-a and MIG-b, instances of one GPU
// (PCI bus id 0000:17:00.0)".
std::string group_device(const std::vector<std::size_t>& members, const std::vector<DevicePlacement>& placed) {
  std::vector<std::string> identities;
  for (const std::size_t r : members)
    if (std::find(identities.begin(), identities.end(), placed[r].identity) == identities.end())
      identities.push_back(placed[r].identity);
  if (identities.size() == 1) return identities[0];
  std::string list;
  for (std::size_t i = 0; i < identities.size(); ++i)
    list += cat(i == 0 ? "" : i + 1 == identities.size() ? " and " : ", ", identities[i]);
  return cat(list, ", instances of one GPU (PCI bus id ", placed[members[0]].bus_id, ")");
}

// Where a group is: "node n1", or the NCCL host when NCCL_HOSTID named it.
std::string group_place(const RankDevices& first, bool nccl) {
  return nccl && first.nccl_host_given ? cat("NCCL host '", first.nccl_host, "' (NCCL_HOSTID)")
                                       : cat("node ", first.host);
}

// "node n1: ranks 0 (index 0) and 1 (index 1) on GPU-aaaa" for every group; empty if none.
std::string describe_groups(const std::vector<std::vector<std::size_t>>& groups, const std::vector<RankDevices>& ranks,
                            const std::vector<DevicePlacement>& placed, bool nccl) {
  std::string named;
  for (const auto& members : groups)
    named += cat(named.empty() ? "" : "; ", group_place(ranks[members[0]], nccl), ": ", rank_list(members, placed),
                 " on ", group_device(members, placed));
  return named;
}

// The groups of ranks the rules refuse to let share a device.
std::vector<std::vector<std::size_t>> refused_groups(const std::vector<RankDevices>& ranks,
                                                     const std::vector<DevicePlacement>& placed,
                                                     const PlacementRules& rules) {
  if (!rules.nccl) {
    if (rules.allow_sharing) return {};
    return shared_groups(ranks.size(), [&](std::size_t r) { return std::make_pair(ranks[r].host, placed[r].identity); });
  }
  if (rules.nccl_duplicate == NcclDuplicate::allowed) return {};
  const bool by_bus = rules.nccl_duplicate == NcclDuplicate::bus_id;
  return shared_groups(ranks.size(), [&](std::size_t r) {
    return std::make_pair(ranks[r].nccl_host, by_bus ? placed[r].bus_id : placed[r].identity);
  });
}

std::string encode(const RankDevices& rank) {
  std::string text = cat(rank.host, '\n', rank.nccl_host_given ? '1' : '0', rank.nccl_host, '\n', rank.local_rank, '\n',
                         rank.visible_set ? '1' : '0', rank.visible_setting);
  for (const VisibleDevice& d : rank.devices) text += cat('\n', d.identity, '\n', d.bus_id);
  return text;
}

RankDevices decode(const std::string& text) {
  std::istringstream in(text);
  RankDevices rank;
  std::string nccl_host, local, setting;
  std::getline(in, rank.host);
  std::getline(in, nccl_host);
  std::getline(in, local);
  std::getline(in, setting);
  FT_CHECK(!nccl_host.empty() && !local.empty() && !setting.empty(), "malformed device report: '", text, "'");
  rank.nccl_host_given = nccl_host[0] == '1';
  rank.nccl_host = nccl_host.substr(1);
  rank.local_rank = std::stoi(local);
  rank.visible_set = setting[0] == '1';
  rank.visible_setting = setting.substr(1);
  for (std::string id, bus; std::getline(in, id) && std::getline(in, bus);) rank.devices.push_back({id, bus});
  return rank;
}

// The boot id NCCL adds to the host name (its HOSTID_FILE), "" where the system has none.
std::string boot_id() {
  std::ifstream in("/proc/sys/kernel/random/boot_id");
  std::string id;
  in >> id;
  return id;
}

}  // namespace

NcclDuplicate nccl_duplicate_rule(int version_code, const char* multi_rank_gpu_enable) {
  if (version_code < 23000) return NcclDuplicate::bus_id;
  // NCCL reads its integer parameters with strtoll: "1" (or any non-zero number) enables, anything else not.
  const bool enabled = multi_rank_gpu_enable != nullptr && std::strtoll(multi_rank_gpu_enable, nullptr, 0) != 0;
  return enabled ? NcclDuplicate::allowed : NcclDuplicate::identity;
}

std::vector<DevicePlacement> place_on_devices(const std::vector<RankDevices>& ranks, const PlacementRules& rules) {
  const std::string blind = ranks_without_devices(ranks);
  FT_REQUIRE(blind.empty(), "CUDA was asked for, but ", blind,
             " sees no CUDA device: give every rank a GPU (sbatch --gpus-per-node with a task per GPU, or a "
             "CUDA_VISIBLE_DEVICES that lists one), or train on the CPU (train.device: cpu)");
  std::vector<DevicePlacement> placed(ranks.size());
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    const int seen = static_cast<int>(ranks[r].devices.size());
    placed[r].visible = seen;
    placed[r].index = ranks[r].local_rank % seen;
    const VisibleDevice& device = ranks[r].devices[static_cast<std::size_t>(placed[r].index)];
    placed[r].identity = device.identity;
    placed[r].bus_id = device.bus_id;
  }
  const std::string shared = describe_groups(refused_groups(ranks, placed, rules), ranks, placed, rules.nccl);
  FT_REQUIRE(shared.empty(), "ranks would share a GPU: ", shared, ": ",
             rules.nccl ? "NCCL cannot run two ranks on one GPU; give each rank its own GPU (one rank per GPU: "
                          "sbatch --gpus-per-node=N with N tasks a node) or use backend mpi or gloo with "
                          "distributed.allow_device_sharing: true"
                        : "start one rank per GPU, or set distributed.allow_device_sharing: true (backend mpi or gloo)");
  return placed;
}

std::string nccl_hosts_sharing_a_gpu(const std::vector<RankDevices>& ranks,
                                     const std::vector<DevicePlacement>& placed) {
  std::vector<std::vector<std::size_t>> apart;
  for (auto& members :
       shared_groups(ranks.size(), [&](std::size_t r) { return std::make_pair(ranks[r].host, placed[r].bus_id); })) {
    std::vector<std::string> hosts;
    for (const std::size_t r : members) hosts.push_back(ranks[r].nccl_host);
    std::sort(hosts.begin(), hosts.end());
    if (std::adjacent_find(hosts.begin(), hosts.end()) == hosts.end()) apart.push_back(std::move(members));
  }
  if (apart.empty()) return "";
  return cat(describe_groups(apart, ranks, placed, false),
             ": separate NCCL hosts (distinct NCCL_HOSTID) on one GPU, so NCCL moves their data over its network "
             "transport (NCCL_NET), not P2P or shared memory: correct, at the network's speed");
}

RankDevices describe_rank_devices(const World& world, const DeviceQuery& devices) {
  RankDevices rank;
  rank.host = world.hostname();
  rank.local_rank = world.local_rank();
  const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
  rank.visible_set = visible != nullptr;
  rank.visible_setting = visible ? visible : "";
  rank.devices = devices.devices();
  const char* hostid = std::getenv("NCCL_HOSTID");
  rank.nccl_host_given = hostid != nullptr;
  rank.nccl_host = nccl_host_identity(hostid, host_name(), boot_id());
  return rank;
}

std::string nccl_host_identity(const char* nccl_hostid, const std::string& host_name, const std::string& boot_id) {
  return nccl_hostid != nullptr ? std::string(nccl_hostid) : host_name + boot_id;
}

std::vector<RankDevices> gather_rank_devices(const World& world, const DeviceQuery& devices) {
  std::vector<RankDevices> ranks;
  for (const std::string& text : world.allgather(encode(describe_rank_devices(world, devices))))
    ranks.push_back(decode(text));
  return ranks;
}

std::vector<DevicePlacement> place_world_on_devices(const World& world, const DeviceQuery& devices,
                                                    const PlacementRules& rules) {
  return place_on_devices(gather_rank_devices(world, devices), rules);
}

}  // namespace ft
