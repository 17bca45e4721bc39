// Event recording and the Chrome trace writer. Clocks are per process: each rank's events are relative
// to its own start, which is aligned closely enough by the barrier-synchronised start of training.
#include "comm/timeline.h"

#include <sstream>

#include "io/atomic_file.h"
#include "runtime/error.h"
#include "runtime/world.h"

namespace ft {

double Timeline::now_us() const {
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - origin_).count();
}

void Timeline::record(const std::string& name, const std::string& track, double start_us, double end_us,
                      const std::string& args_json) {
  if (!enabled_) return;
  std::lock_guard<std::mutex> lock(mutex_);
  events_.push_back({name, track, args_json, start_us, end_us});
}

void Timeline::write(const World& world, const std::string& path) const {
  std::ostringstream mine;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    std::vector<std::string> tracks;
    for (const auto& e : events_) {
      std::size_t tid = 0;
      while (tid < tracks.size() && tracks[tid] != e.track) ++tid;
      if (tid == tracks.size()) {
        tracks.push_back(e.track);
        mine << "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":" << world.rank() << ",\"tid\":" << tid
             << ",\"args\":{\"name\":\"" << e.track << "\"}},\n";
      }
      mine << "{\"name\":\"" << e.name << "\",\"ph\":\"X\",\"pid\":" << world.rank() << ",\"tid\":" << tid
           << ",\"ts\":" << static_cast<long long>(e.start)
           << ",\"dur\":" << static_cast<long long>(e.end - e.start + 0.5);
      if (!e.args.empty()) mine << ",\"args\":" << e.args;
      mine << "},\n";
    }
    mine << "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":" << world.rank()
         << ",\"args\":{\"name\":\"rank " << world.rank() << " (" << world.hostname() << ")\"}}";
  }
  const auto all = world.allgather(mine.str());
  if (world.rank() != 0) return;
  std::ostringstream out;
  out << "{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n";
  for (std::size_t r = 0; r < all.size(); ++r) out << all[r] << (r + 1 < all.size() ? ",\n" : "\n");
  out << "]}\n";
  write_file_atomically(path, out.str());
}

}  // namespace ft
