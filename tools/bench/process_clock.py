# The cold clock of the Python baselines: seconds since this process started, from the kernel's record of its
# start, the same boundary as fusetrain's results field cold_s (src/monitor/process_clock.h).
"""seconds_since_process_start(): /proc/self/stat's 22nd field (clock ticks since boot on the boot-time clock)
against CLOCK_BOOTTIME now; the tick is 10 ms on most kernels. Linux only."""
from __future__ import annotations

import os
import time


def seconds_since_start(stat_text: str, now_s: float, ticks_per_s: int) -> float:
    """The same from the text of a /proc/PID/stat file; the command name (field 2) may hold spaces and ')'."""
    fields = stat_text[stat_text.rindex(")") + 1:].split()
    return now_s - int(fields[19]) / ticks_per_s  # fields[0] is field 3


def seconds_since_process_start() -> float:
    with open("/proc/self/stat", encoding="ascii") as stat:
        text = stat.read()
    return seconds_since_start(text, time.clock_gettime(time.CLOCK_BOOTTIME), os.sysconf("SC_CLK_TCK"))
