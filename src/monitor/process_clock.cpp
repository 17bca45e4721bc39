// Reading the process's start time: /proc/self/stat's 22nd field counts clock ticks since boot on the
// boot-time clock (suspend included), which CLOCK_BOOTTIME reads too.
#include "monitor/process_clock.h"

#include <time.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

namespace ft {

double seconds_since_start(const std::string& stat_text, double now_s, long ticks_per_s) {
  // Field 2, the command name, is in parentheses and may hold spaces: count from the last ')'.
  const auto close = stat_text.rfind(')');
  if (close == std::string::npos || ticks_per_s <= 0) return -1;
  std::istringstream fields(stat_text.substr(close + 1));
  std::string field;
  for (int k = 3; k <= 22; ++k)
    if (!(fields >> field)) return -1;
  char* end = nullptr;
  const unsigned long long ticks = std::strtoull(field.c_str(), &end, 10);
  if (end == field.c_str() || *end != '\0') return -1;
  return now_s - static_cast<double>(ticks) / static_cast<double>(ticks_per_s);
}

double seconds_since_process_start() {
  std::ifstream in("/proc/self/stat");
  std::stringstream text;
  text << in.rdbuf();
  timespec now{};
  if (!in.is_open() || clock_gettime(CLOCK_BOOTTIME, &now) != 0) return -1;
  return seconds_since_start(text.str(), static_cast<double>(now.tv_sec) + 1e-9 * static_cast<double>(now.tv_nsec),
                             sysconf(_SC_CLK_TCK));
}

}  // namespace ft
