// The stand-in device list and the CUDA_VISIBLE_DEVICES filter it applies, written after the CUDA
// runtime's documented rules so that tests see what a real process on that node would see.
#include "runtime/device_query.h"

#include <algorithm>
#include <cctype>
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

}  // namespace

std::vector<std::string> DeviceQuery::identities() const {
  std::vector<std::string> ids;
  for (int i = 0; i < count(); ++i) ids.push_back(identity(i));
  return ids;
}

std::vector<std::string> select_visible(const std::vector<std::string>& all, const char* visible) {
  if (visible == nullptr) return all;
  std::vector<std::string> selected;
  std::vector<int> taken;
  for (const std::string& entry : split_commas(visible)) {
    const int index = resolve_entry(all, entry);
    if (index < 0 || std::find(taken.begin(), taken.end(), index) != taken.end()) break;
    taken.push_back(index);
    selected.push_back(all[index]);
  }
  return selected;
}

std::string DeviceList::identity(int index) const {
  FT_CHECK(index >= 0 && index < count(), "device index ", index, " out of range (", count(), " visible)");
  return identities_[static_cast<std::size_t>(index)];
}

DeviceList listed_devices(const std::string& listed, const char* cuda_visible_devices) {
  const std::vector<std::string> all = listed.empty() ? std::vector<std::string>{} : split_commas(listed);
  for (const std::string& id : all)
    FT_REQUIRE(!id.empty() && std::count(all.begin(), all.end(), id) == 1, kTestGpusVariable, "='", listed,
               "': list each device once, by a non-empty identity such as GPU-aaaa");
  return DeviceList(select_visible(all, cuda_visible_devices));
}

}  // namespace ft
