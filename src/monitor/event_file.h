// One TensorBoard event file, appended to while a run goes: named as TensorFlow names them, framed as
// TFRecords, and flushed to the operating system on request so that a crash leaves what was logged.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

namespace ft {

// Now, in seconds since the Unix epoch (an event's wall_time).
double wall_seconds();
// Whether a file name is an event file's, as TensorBoard decides it ("tfevents" in the name).
bool is_event_file_name(const std::string& name);
// The paths of the event files in `folder`, in name order (none when it does not exist).
std::vector<std::string> event_files_in(const std::string& folder);

class EventFile {
 public:
  // Creates <folder>/events.out.tfevents.<seconds>.<host> (the folder too) and writes the file-version
  // record. TensorBoard reads a folder's files in name order, so <seconds> is `wall_time`'s, or one more than
  // the latest of the event files already there when that is later. Throws ft::Error naming the path.
  EventFile(const std::string& folder, double wall_time);
  ~EventFile();
  EventFile(const EventFile&) = delete;
  EventFile& operator=(const EventFile&) = delete;

  // Appends one Event message (tensorboard_events.h) as a record; buffered until flush().
  void write(std::string_view event);
  // Hands what was written to the operating system. Throws ft::Error naming the file on a failed write.
  void flush();
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  std::FILE* file_ = nullptr;
};

}  // namespace ft
