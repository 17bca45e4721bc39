// The CUDA devices one process sees, behind an interface: the real list comes from the CUDA runtime
// (train/visible_devices), a stand-in lists fake devices so that placement can be tested on CPU hosts.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace ft {

// One device as a process sees it: the identity CUDA_VISIBLE_DEVICES and nvidia-smi use ("GPU-<uuid>", or
// "MIG-<uuid>" for an instance of a partitioned GPU) and the PCI bus id of the physical GPU behind it
// ("0000:17:00.0"; the instances of one partitioned GPU share it). NCCL tells devices apart by the bus id.
struct VisibleDevice {
  std::string identity;
  std::string bus_id;
  bool operator==(const VisibleDevice& other) const {
    return identity == other.identity && bus_id == other.bus_id;
  }
};

// Devices by visible index (what cudaSetDevice takes), so that ranks can tell whether two indices on one
// node are the same device.
class DeviceQuery {
 public:
  virtual ~DeviceQuery() = default;
  virtual int count() const = 0;
  virtual VisibleDevice device(int index) const = 0;
  std::string identity(int index) const { return device(index).identity; }
  // Every visible device, by index.
  std::vector<VisibleDevice> devices() const;
};

// A fixed list of devices, by visible index.
class DeviceList : public DeviceQuery {
 public:
  explicit DeviceList(std::vector<VisibleDevice> devices) : devices_(std::move(devices)) {}
  int count() const override { return static_cast<int>(devices_.size()); }
  VisibleDevice device(int index) const override;

 private:
  std::vector<VisibleDevice> devices_;
};

// The stand-in: the node's devices are `listed` (comma separated entries IDENTITY[@BUS_ID], index i = the
// i-th; without a bus id the i-th physical device has bus id 0000:<i+1>:00.0), and this process sees those
// that `cuda_visible_devices` selects, as the CUDA runtime filters its list by CUDA_VISIBLE_DEVICES
// (nullptr: unset, all of them). "MIG-a@0000:17:00.0,MIG-b@0000:17:00.0" are two instances of one GPU.
DeviceList listed_devices(const std::string& listed, const char* cuda_visible_devices);

// The variable that switches a process to the stand-in: FUSETRAIN_TEST_GPUS="GPU-aaaa,GPU-bbbb" (a test
// aid: placement decisions see these devices, filtered by this process's CUDA_VISIBLE_DEVICES).
constexpr const char* kTestGpusVariable = "FUSETRAIN_TEST_GPUS";

// The indices into `all` (the node's identities by physical index) that `visible` selects, in its order:
// select_visible's rule.
std::vector<int> select_visible_indices(const std::vector<std::string>& all, const char* visible);

// The identities of `all` (the node's devices by physical index) that `visible` selects, with the CUDA
// runtime's rules: entries are indices or unique identity prefixes ("GPU-8932f937"), separated by
// commas; the list ends at the first entry that is invalid, out of range or repeated; unset
// (nullptr) selects all, an empty string none.
std::vector<std::string> select_visible(const std::vector<std::string>& all, const char* visible);

}  // namespace ft
