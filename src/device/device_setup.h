// Placement of a rank: which device it trains on (a GPU chosen from what every rank sees, see
// runtime/device_placement) and, on CPU hosts, how many compute threads it may use so that the ranks
// of one node do not oversubscribe its cores.
#pragma once

#include <ATen/Device.h>

#include <string>
#include <vector>

#include "config/schema.h"
#include "runtime/device_placement.h"

namespace ft {

class World;

// Whether this process can train on CUDA: the build has CUDA and sees at least one device.
bool cuda_available();
// Why cuda_available() is false ("this build has no CUDA ...", "no CUDA device is visible ..."); empty if true.
std::string cuda_unavailable_reason();
// Whether a rank trains on CUDA for `choice`, given the build (`built`) and whether any rank sees a
// device; throws ft::Error naming train.device when CUDA is asked of a build without it.
bool cuda_wanted(DeviceChoice choice, bool built, bool any_visible);
// The placement rules of a run on `backend` (NCCL's rule is that of the NCCL library loaded, and of this
// process's NCCL_MULTI_RANK_GPU_ENABLE).
PlacementRules placement_rules(BackendName backend, bool allow_sharing);

// The GPU of every rank for `choice`, from all ranks' reports (runtime/device_placement); empty when the
// ranks train on the CPU (no rank sees a device under train.device auto). Throws as place_on_devices.
std::vector<DevicePlacement> gpu_placement(DeviceChoice choice, const std::vector<RankDevices>& ranks,
                                           const PlacementRules& rules);
// Picks the device and limits threads; throws ft::Error naming the rank, node and device on bad
// placement. Collective when CUDA may be used (train.device auto or cuda): every rank calls it.
at::Device place_rank(const Config& config, const World& world);
// Waits for all queued work on `device` (no-op on CPU).
void synchronize(const at::Device& device);

}  // namespace ft
