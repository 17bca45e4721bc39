// The device placement rule and its one gather: ranks report what they see, and every rank applies the
// same rule to all reports, so that a bad placement stops every rank with the same message.
#include "runtime/device_placement.h"

#include <cstdlib>
#include <map>
#include <sstream>

#include "runtime/device_query.h"
#include "runtime/error.h"
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
    if (!ranks[r].identities.empty()) continue;
    named += cat(named.empty() ? "" : ", ", "rank ", r, " on node ", ranks[r].host, " (", describe_setting(ranks[r]), ")");
  }
  return named;
}

// "node n1: ranks 0 (index 0) and 1 (index 1) on GPU-aaaa" for every device that several ranks picked.
std::string shared_devices(const std::vector<RankDevices>& ranks, const std::vector<DevicePlacement>& placed) {
  std::map<std::pair<std::string, std::string>, std::vector<std::size_t>> users;
  for (std::size_t r = 0; r < ranks.size(); ++r) users[{ranks[r].host, placed[r].identity}].push_back(r);
  std::string named;
  for (const auto& [device, members] : users) {
    if (members.size() < 2) continue;
    std::string list;
    for (std::size_t i = 0; i < members.size(); ++i)
      list += cat(i == 0 ? "" : i + 1 == members.size() ? " and " : ", ", members[i], " (index ",
                  placed[members[i]].index, ")");
    named += cat(named.empty() ? "" : "; ", "node ", device.first, ": ranks ", list, " on ", device.second);
  }
  return named;
}

std::string encode(const RankDevices& rank) {
  std::string text = cat(rank.host, '\n', rank.local_rank, '\n', rank.visible_set ? '1' : '0', rank.visible_setting);
  for (const std::string& id : rank.identities) text += '\n' + id;
  return text;
}

RankDevices decode(const std::string& text) {
  std::istringstream in(text);
  RankDevices rank;
  std::string local, setting;
  std::getline(in, rank.host);
  std::getline(in, local);
  std::getline(in, setting);
  FT_CHECK(!local.empty() && !setting.empty(), "malformed device report: '", text, "'");
  rank.local_rank = std::stoi(local);
  rank.visible_set = setting[0] == '1';
  rank.visible_setting = setting.substr(1);
  for (std::string id; std::getline(in, id);) rank.identities.push_back(id);
  return rank;
}

}  // namespace

std::vector<DevicePlacement> place_on_devices(const std::vector<RankDevices>& ranks, const PlacementRules& rules) {
  const std::string blind = ranks_without_devices(ranks);
  FT_REQUIRE(blind.empty(), "CUDA was asked for, but ", blind,
             " sees no CUDA device: give every rank a GPU (srun --gpus-per-task=1, or a CUDA_VISIBLE_DEVICES "
             "that lists one), or train on the CPU (train.device: cpu)");
  std::vector<DevicePlacement> placed(ranks.size());
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    const int seen = static_cast<int>(ranks[r].identities.size());
    placed[r].visible = seen;
    placed[r].index = ranks[r].local_rank % seen;
    placed[r].identity = ranks[r].identities[static_cast<std::size_t>(placed[r].index)];
  }
  const std::string shared = shared_devices(ranks, placed);
  FT_REQUIRE(shared.empty() || (rules.allow_sharing && !rules.nccl), "ranks would share a GPU: ", shared, ": ",
             rules.nccl ? "NCCL cannot run two ranks on one GPU; give each rank its own GPU (one rank per GPU, "
                          "srun --gpus-per-task=1) or use backend mpi or gloo with distributed.allow_device_sharing: true"
                        : "start one rank per GPU, or set distributed.allow_device_sharing: true (backend mpi or gloo)");
  return placed;
}

RankDevices describe_rank_devices(const World& world, const DeviceQuery& devices) {
  RankDevices rank;
  rank.host = world.hostname();
  rank.local_rank = world.local_rank();
  const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
  rank.visible_set = visible != nullptr;
  rank.visible_setting = visible ? visible : "";
  rank.identities = devices.identities();
  return rank;
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
