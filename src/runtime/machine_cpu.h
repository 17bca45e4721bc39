// The CPU time every core of this machine has spent busy (all processes and the kernel), from /proc/stat: what a
// link sweep charges to its all-reduces when the ranks it stands for share one machine.
#pragma once

#include <istream>

namespace ft {

// Seconds busy summed over the machine's online cores since boot (user, nice, system, irq, softirq and steal);
// -1 where /proc/stat cannot be read or parsed (not Linux).
double machine_busy_cpu_s();

// The same from a /proc/stat text and the clock ticks a second: its first line "cpu  user nice system idle iowait
// irq softirq steal ..."; -1 when that line is missing or malformed or `ticks_per_s` is not positive.
double busy_cpu_s_from_stat(std::istream& stat, long ticks_per_s);

// The machine's online cores, at least 1.
int machine_cores();

}  // namespace ft
