// The cold clock: seconds since this process started, from the kernel's record of its start, so that a run
// can say how long a fresh process took to reach a point (library loading, data upload and warm-up included).
#pragma once

#include <string>

namespace ft {

// Seconds from the process's start (Linux: /proc/self/stat's starttime, in clock ticks of the boot-time
// clock, 10 ms on most kernels) to now on the same clock; -1 where the start is unknown.
double seconds_since_process_start();

// The same from the text of a /proc/PID/stat file, `now_s` on the boot-time clock and `ticks_per_s` the
// kernel's clock ticks (sysconf(_SC_CLK_TCK)); -1 when the text has no start time.
double seconds_since_start(const std::string& stat_text, double now_s, long ticks_per_s);

}  // namespace ft
