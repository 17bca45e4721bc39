// The cold clock's reading of /proc/PID/stat: the start time is the 22nd field, counted after the command
// name in parentheses (which may hold spaces and parentheses), in clock ticks; worked out by hand here.
#include <gtest/gtest.h>

#include <string>

#include "monitor/process_clock.h"

namespace ft {
namespace {

// A stat line with `start` as field 22 and `name` as the command.
std::string stat_line(const std::string& name, const std::string& start) {
  std::string line = "4242 (" + name + ") S";  // fields 1-3
  for (int field = 4; field <= 21; ++field) line += " " + std::to_string(field * 11);
  return line + " " + start + " 1000 2000 3000\n";
}

TEST(ProcessClock, StartTimeIsTheTwentySecondField) {
  // Started 12345 ticks of 100 Hz (123.45 s) after boot; now 130 s after boot: 6.55 s old.
  EXPECT_NEAR(seconds_since_start(stat_line("fusetrain", "12345"), 130.0, 100), 6.55, 1e-9);
  EXPECT_NEAR(seconds_since_start(stat_line("fusetrain", "250"), 3.0, 250), 2.0, 1e-12);  // another tick rate
}

TEST(ProcessClock, CommandNamesWithSpacesAndParenthesesAreSkipped) {
  EXPECT_NEAR(seconds_since_start(stat_line("a b) c (d", "100"), 2.5, 100), 1.5, 1e-12);
}

TEST(ProcessClock, TextWithoutAStartTimeIsUnknown) {
  EXPECT_EQ(seconds_since_start("4242 (x) S 1 2 3", 10.0, 100), -1);  // too few fields
  EXPECT_EQ(seconds_since_start("no parentheses at all", 10.0, 100), -1);
  EXPECT_EQ(seconds_since_start(stat_line("x", "12a"), 10.0, 100), -1);
  EXPECT_EQ(seconds_since_start(stat_line("x", "100"), 10.0, 0), -1);
}

TEST(ProcessClock, ThisProcessIsOlderThanNothingAndYoungerThanADay) {
  const double age = seconds_since_process_start();
  EXPECT_GT(age, 0);
  EXPECT_LT(age, 86400);
}

}  // namespace
}  // namespace ft
