// Tests of runtime/machine_cpu.cpp: the busy seconds of a /proc/stat text worked out by hand (idle and iowait left
// out), malformed texts refused, and the live counter growing by at least what a thread spinning on it spends.
#include "runtime/machine_cpu.h"

#include <gtest/gtest.h>

#include <chrono>
#include <sstream>
#include <thread>

namespace ft {
namespace {

double busy(const std::string& text, long ticks = 100) {
  std::istringstream stat(text);
  return busy_cpu_s_from_stat(stat, ticks);
}

TEST(MachineCpu, BusyIsEveryFieldButIdleAndIowait) {
  // user 100, nice 20, system 30, idle 400, iowait 50, irq 6, softirq 7, steal 8 (guest fields after): 171 ticks.
  EXPECT_DOUBLE_EQ(busy("cpu  100 20 30 400 50 6 7 8 9 10\ncpu0 1 2 3 4 5 6 7 8 9 10\n"), 1.71);
  EXPECT_DOUBLE_EQ(busy("cpu  100 20 30 400 50 6 7 8 9 10\n", 250), 171 / 250.0);
  // Each busy field counts once, at its own place.
  EXPECT_DOUBLE_EQ(busy("cpu 0 1 0 0 0 0 0 0"), 0.01);
  EXPECT_DOUBLE_EQ(busy("cpu 0 0 0 1000 1000 0 0 1"), 0.01);
  EXPECT_DOUBLE_EQ(busy("cpu 0 0 0 0 0 0 0 0"), 0);
}

TEST(MachineCpu, MalformedStatIsMinusOne) {
  EXPECT_EQ(busy(""), -1);
  EXPECT_EQ(busy("cpu0 100 20 30 400 50 6 7 8"), -1);  // a core's line, not the machine's
  EXPECT_EQ(busy("cpu 100 20 30 400 50 6 7"), -1);     // steal missing
  EXPECT_EQ(busy("cpu 100 twenty 30 400 50 6 7 8"), -1);
  EXPECT_EQ(busy("cpu 100 20 30 400 50 6 7 8", 0), -1);
}

TEST(MachineCpu, TheLiveCounterGrowsWhileAThreadSpins) {
  const double before = machine_busy_cpu_s();
  ASSERT_GE(before, 0) << "/proc/stat unreadable";
  const auto start = std::chrono::steady_clock::now();
  volatile double sink = 0;
  while (std::chrono::steady_clock::now() - start < std::chrono::milliseconds(300)) sink = sink + 1;
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const double grown = machine_busy_cpu_s() - before;
  // The spinning core is busy (with this thread or, under load, another) for the whole 0.3 s, sampled by 10 ms
  // ticks; no more than every core for the whole time, plus a tick each.
  EXPECT_GE(grown, 0.2);
  EXPECT_LE(grown, machine_cores() * (wall + 0.02));
  EXPECT_GE(machine_cores(), 1);
  EXPECT_EQ(machine_cores(), static_cast<int>(std::max(1u, std::thread::hardware_concurrency())));
}

}  // namespace
}  // namespace ft
