// TensorBoard event files: their names (later than the folder's earlier files, so TensorBoard merges a
// resumed run's segments in order), creation without replacing anything, records and flushes.
#include "monitor/event_file.h"

#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>

#include "io/paths.h"
#include "monitor/tensorboard_events.h"
#include "monitor/tf_record.h"
#include "runtime/error.h"
#include "runtime/host_name.h"

namespace ft {
namespace {

constexpr const char* kPrefix = "events.out.tfevents.";

// The seconds in an event file's name (events.out.tfevents.<seconds>.<host>), -1 for another name.
std::int64_t seconds_in_name(const std::string& name) {
  const std::size_t prefix = std::strlen(kPrefix);
  if (name.compare(0, prefix, kPrefix) != 0) return -1;
  std::int64_t seconds = 0;
  std::size_t i = prefix;
  for (; i < name.size() && name[i] >= '0' && name[i] <= '9'; ++i) seconds = seconds * 10 + (name[i] - '0');
  return i > prefix ? seconds : -1;
}

std::string new_file_path(const std::string& folder, double wall_time) {
  auto seconds = static_cast<std::int64_t>(std::floor(wall_time));
  for (const auto& name : paths::list_directory(folder)) seconds = std::max(seconds, seconds_in_name(name) + 1);
  const std::string host = host_name();
  return paths::join(folder, cat(kPrefix, seconds, ".", host.empty() ? "localhost" : host));
}

}  // namespace

double wall_seconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

bool is_event_file_name(const std::string& name) { return name.find("tfevents") != std::string::npos; }

std::vector<std::string> event_files_in(const std::string& folder) {
  std::vector<std::string> out;
  if (!paths::is_directory(folder)) return out;
  for (const auto& name : paths::list_directory(folder))
    if (is_event_file_name(name)) out.push_back(paths::join(folder, name));
  return out;
}

EventFile::EventFile(const std::string& folder, double wall_time) {
  const std::string problem = paths::try_create_directories(folder);
  FT_REQUIRE(problem.empty(), "TensorBoard folder ", folder, " cannot be created: ", problem);
  path_ = new_file_path(folder, wall_time);
  file_ = std::fopen(path_.c_str(), "wbx");  // x: never opens a file that exists
  FT_REQUIRE(file_ != nullptr, "TensorBoard event file ", path_, " cannot be created: ", std::strerror(errno));
  write(file_version_event(wall_time));
  flush();
}

EventFile::~EventFile() {
  if (file_ != nullptr) std::fclose(file_);
}

void EventFile::write(std::string_view event) {
  const std::string record = tf_record(event);
  if (std::fwrite(record.data(), 1, record.size(), file_) != record.size())
    throw Error(cat("TensorBoard event file ", path_, " cannot be written: ", std::strerror(errno)));
}

void EventFile::flush() {
  FT_REQUIRE(std::fflush(file_) == 0, "TensorBoard event file ", path_, " cannot be written: ", std::strerror(errno));
}

}  // namespace ft
