// Tests of runtime/compute_load.cpp: the busy threads a link sweep times beside run while the load lives, stop
// with it, and a count that is not a count is refused.
#include "runtime/compute_load.h"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

namespace ft {
namespace {

// Waits up to 10 s for `load` to pass `passes`: a loaded machine may start its threads late, never not at all.
bool reaches(const ComputeLoad& load, std::int64_t passes) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (load.passes() < passes && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  return load.passes() >= passes;
}

TEST(ComputeLoad, ItsThreadsRunUntilItEnds) {
  const ComputeLoad load(2);
  EXPECT_EQ(load.threads(), 2);
  EXPECT_TRUE(reaches(load, 10));
  const std::int64_t seen = load.passes();
  EXPECT_TRUE(reaches(load, seen + 10)) << "the threads stopped after " << seen << " passes";
}

TEST(ComputeLoad, OneThreadRunsToo) {
  const ComputeLoad load(1);
  EXPECT_EQ(load.threads(), 1);
  EXPECT_TRUE(reaches(load, 1));
}

TEST(ComputeLoad, NoThreadsMakeNoPasses) {
  const ComputeLoad load(0);
  EXPECT_EQ(load.threads(), 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ(load.passes(), 0);
}

TEST(ComputeLoad, ANegativeCountIsRefused) {
  EXPECT_THROW(ComputeLoad(-1), std::exception);
}

}  // namespace
}  // namespace ft
