// The CUDA devices one process sees, behind an interface: the real list comes from the CUDA runtime
// (train/visible_devices), a stand-in lists fake devices so that placement can be tested on CPU hosts.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace ft {

// Devices by visible index (what cudaSetDevice takes) with the identity of the physical device behind
// each ("GPU-<uuid>"), so that ranks can tell whether two indices on one node are the same device.
class DeviceQuery {
 public:
  virtual ~DeviceQuery() = default;
  virtual int count() const = 0;
  virtual std::string identity(int index) const = 0;
  // Every visible identity, by index.
  std::vector<std::string> identities() const;
};

// A fixed list of identities, by visible index.
class DeviceList : public DeviceQuery {
 public:
  explicit DeviceList(std::vector<std::string> identities) : identities_(std::move(identities)) {}
  int count() const override { return static_cast<int>(identities_.size()); }
  std::string identity(int index) const override;

 private:
  std::vector<std::string> identities_;
};

// The stand-in: the node's devices are `listed` (comma separated identities, index i = the i-th), and
// this process sees those that `cuda_visible_devices` selects, as the CUDA runtime filters its list by
// CUDA_VISIBLE_DEVICES (nullptr: unset, all of them).
DeviceList listed_devices(const std::string& listed, const char* cuda_visible_devices);

// The variable that switches a process to the stand-in: FUSETRAIN_TEST_GPUS="GPU-aaaa,GPU-bbbb" (a test
// aid: placement decisions see these devices, filtered by this process's CUDA_VISIBLE_DEVICES).
constexpr const char* kTestGpusVariable = "FUSETRAIN_TEST_GPUS";

// The identities of `all` (the node's devices by physical index) that `visible` selects, with the CUDA
// runtime's rules: entries are indices or unique identity prefixes ("GPU-8932f937"), separated by
// commas; the list ends at the first entry that is invalid, out of range or repeated; unset
// (nullptr) selects all, an empty string none.
std::vector<std::string> select_visible(const std::vector<std::string>& all, const char* visible);

}  // namespace ft
