// /proc/stat's first line ("cpu  user nice system idle iowait irq softirq steal ...", in clock ticks) read as the
// machine's busy seconds; idle and iowait are the time no core worked.
#include "runtime/machine_cpu.h"

#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <string>
#include <thread>

namespace ft {

double busy_cpu_s_from_stat(std::istream& stat, long ticks_per_s) {
  std::string label;
  double user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0;
  if (!(stat >> label >> user >> nice >> system >> idle >> iowait >> irq >> softirq >> steal) || label != "cpu")
    return -1;
  return ticks_per_s > 0 ? (user + nice + system + irq + softirq + steal) / static_cast<double>(ticks_per_s) : -1;
}

double machine_busy_cpu_s() {
  std::ifstream stat("/proc/stat");
  return busy_cpu_s_from_stat(stat, sysconf(_SC_CLK_TCK));
}

int machine_cores() { return std::max(1, static_cast<int>(std::thread::hardware_concurrency())); }

}  // namespace ft
