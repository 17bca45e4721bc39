// Tests of runtime/heap_policy.cpp: under the policy a freed block is handed out again without page
// faults, and an environment that tunes malloc itself is left alone.
#include "runtime/heap_policy.h"

#include <gtest/gtest.h>

#include <sys/resource.h>

#include <cstdlib>
#include <cstring>
#include <string>

namespace ft {
namespace {

long minor_faults() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_minflt;
}

// Allocates `bytes`, writes every page and frees it; returns the page faults that took.
long faults_of_one_use(std::size_t bytes) {
  const long before = minor_faults();
  auto* block = static_cast<char*>(std::malloc(bytes));
  std::memset(block, 1, bytes);
  asm volatile("" : : "r"(block) : "memory");  // the compiler may not drop the writes
  const long after = minor_faults();
  std::free(block);
  return after - before;
}

TEST(HeapPolicy, AFreedBlockIsReusedWithoutPageFaults) {
  const std::string what = keep_freed_memory();  // says when the environment or the C library rules instead
  if (what.find("kept for reuse") == std::string::npos) GTEST_SKIP() << "policy not applied: " << what;
  EXPECT_EQ(heap_policy_description(), what);
  // 24 MiB is over glibc's default threshold, so by default the first free unmaps it and the second
  // use faults all of its 6144 pages in again.
  const std::size_t bytes = std::size_t{24} << 20;
  const long first = faults_of_one_use(bytes);
  const long second = faults_of_one_use(bytes);
  EXPECT_GT(first, 1000) << "the first use of fresh memory faults its pages in";
  EXPECT_LT(second, 64) << "the second use must reuse the freed pages";
}

TEST(HeapPolicy, LeavesAnEnvironmentThatTunesMallocAlone) {
  EXPECT_FALSE(environment_tunes_malloc(nullptr, nullptr, nullptr));
  EXPECT_FALSE(environment_tunes_malloc("glibc.pthread.rseq=0", "", nullptr));
  EXPECT_TRUE(environment_tunes_malloc("glibc.malloc.trim_threshold=0", nullptr, nullptr));
  EXPECT_TRUE(environment_tunes_malloc(nullptr, "65536", nullptr));
  EXPECT_TRUE(environment_tunes_malloc(nullptr, nullptr, "0"));
}

}  // namespace
}  // namespace ft
