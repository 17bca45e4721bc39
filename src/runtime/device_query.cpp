// The stand-in device list and the CUDA_VISIBLE_DEVICES filter it applies, written after the CUDA
// runtime's documented rules so that tests see what a real process on that node would see.
#include "runtime/device_query.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <sstream>

#include "runtime/error.h"

namespace ft {
namespace {

std::vector<std::string> split_commas(const std::string& text) {
  std::vector<std::string> parts;
  std::stringstream in(text);
  for (std::string part; std::getline(in, part, ',');) {
    const auto first = part.find_first_not_of(" \t");
    const auto last = part.find_last_not_of(" \t");
    parts.push_back(first == std::string::npos ? std::string() : part.substr(first, last - first + 1));
  }
  return parts;
}

bool all_digits(const std::string& text) {
  return !text.empty() && text.size() < 10 &&
         std::all_of(text.begin(), text.end(), [](unsigned char c) { return std::isdigit(c) != 0; });
}

// The physical index `entry` names in `all`, or -1 when it names none or is ambiguous.
int resolve_entry(const std::vector<std::string>& all, const std::string& entry) {
  if (all_digits(entry)) {
    const int index = std::stoi(entry);
    return index < static_cast<int>(all.size()) ? index : -1;
  }
  if (entry.rfind("GPU-", 0) != 0 && entry.rfind("MIG-", 0) != 0) return -1;
  int found = -1;
  for (int i = 0; i < static_cast<int>(all.size()); ++i) {
    if (all[i].rfind(entry, 0) != 0) continue;
    if (found >= 0) return -1;  // a prefix of two devices names neither
    found = i;
  }
  return found;
}

// A stand-in entry IDENTITY[@BUS_ID]; the i-th physical device's bus id defaults to 0000:<i+1>:00.0.
VisibleDevice stand_in_device(const std::string& entry, std::size_t physical_index) {
  const auto at = entry.find('@');
  if (at != std::string::npos) return {entry.substr(0, at), entry.substr(at + 1)};
  char bus[32];
  std::snprintf(bus, sizeof(bus), "0000:%02zx:00.0", physical_index + 1);
  return {entry, bus};
}

}  // namespace

std::vector<VisibleDevice> DeviceQuery::devices() const {
  std::vector<VisibleDevice> all;
  for (int i = 0; i < count(); ++i) all.push_back(device(i));
  return all;
}

std::vector<int> select_visible_indices(const std::vector<std::string>& all, const char* visible) {
  std::vector<int> taken;
  if (visible == nullptr) {
    for (int i = 0; i < static_cast<int>(all.size()); ++i) taken.push_back(i);
    return taken;
  }
  for (const std::string& entry : split_commas(visible)) {
    const int index = resolve_entry(all, entry);
    if (index < 0 || std::find(taken.begin(), taken.end(), index) != taken.end()) break;
    taken.push_back(index);
  }
  return taken;
}

std::vector<std::string> select_visible(const std::vector<std::string>& all, const char* visible) {
  std::vector<std::string> selected;
  for (const int index : select_visible_indices(all, visible)) selected.push_back(all[static_cast<std::size_t>(index)]);
  return selected;
}

VisibleDevice DeviceList::device(int index) const {
  FT_CHECK(index >= 0 && index < count(), "device index ", index, " out of range (", count(), " visible)");
  return devices_[static_cast<std::size_t>(index)];
}

DeviceList listed_devices(const std::string& listed, const char* cuda_visible_devices) {
  const std::vector<std::string> entries = listed.empty() ? std::vector<std::string>{} : split_commas(listed);
  std::vector<VisibleDevice> node;
  std::vector<std::string> identities;
  for (std::size_t i = 0; i < entries.size(); ++i) {
    node.push_back(stand_in_device(entries[i], i));
    identities.push_back(node.back().identity);
  }
  for (const VisibleDevice& d : node)
    FT_REQUIRE(!d.identity.empty() && !d.bus_id.empty() &&
                   std::count(identities.begin(), identities.end(), d.identity) == 1,
               kTestGpusVariable, "='", listed,
               "': list each device once, by a non-empty identity such as GPU-aaaa (optionally @ its PCI bus id)");
  std::vector<VisibleDevice> seen;
  for (const int index : select_visible_indices(identities, cuda_visible_devices))
    seen.push_back(node[static_cast<std::size_t>(index)]);
  return DeviceList(std::move(seen));
}

}  // namespace ft
