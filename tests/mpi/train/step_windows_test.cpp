// The straggler verdict's gather on real ranks: every rank reads every other's windows as sent and records the
// same verdict; a rank whose window count differs from this one's is refused by name on every rank, not cut short.
#include <gtest/gtest.h>

#include <string>

#include "monitor/step_windows.h"
#include "runtime/error.h"
#include "train_fixture.h"

namespace ft::test {
namespace {

// Rank r's windows: compute 1 s each, except that the last rank is slow by half in every window; no waiting.
RankSteps windows_of(int rank, int size, std::size_t count) {
  RankSteps s;
  s.compute_s.assign(count, rank == size - 1 ? 1.5 : 1.0);
  s.wait_s.assign(count, 0.0);
  return s;
}

TEST(StepWindowsGather, EveryRankRecordsTheSlowRankAndItsOwnExcess) {
  const World& w = world();
  RunSummary summary;
  RankRecord mine;
  const StragglerVerdict v = record_straggler(w, windows_of(w.rank(), w.size(), 4), 0.2, summary, mine);
  EXPECT_EQ(v.rank, w.size() - 1);
  EXPECT_EQ(summary.straggler_rank, w.size() - 1);
  EXPECT_EQ(summary.straggler_windows, 4);
  EXPECT_EQ(summary.straggler_slow_share, 1.0);  // slow in every window
  EXPECT_EQ(mine.slow_step_share, w.rank() == w.size() - 1 ? 1.0 : 0.0);
  // Its excess over the others' median (the lower middle): the slow rank 1.5/1 - 1; another rank 1/1.5 - 1 when
  // the slow one is its only other, else 1/1 - 1.
  const double excess = w.rank() == w.size() - 1 ? 0.5 : w.size() == 2 ? 1 / 1.5 - 1 : 0.0;
  EXPECT_DOUBLE_EQ(mine.compute_excess, excess);
}

TEST(StepWindowsGather, AWindowCountThatDiffersIsNamedOnEveryRank) {
  const World& w = world();
  const std::size_t count = w.rank() == 1 ? 3 : 2;  // rank 1 one more than the others
  RunSummary summary;
  RankRecord mine;
  try {
    record_straggler(w, windows_of(w.rank(), w.size(), count), 0.2, summary, mine);
    ADD_FAILURE() << "rank " << w.rank() << ": no error";
  } catch (const Error& e) {
    const std::string expected = w.rank() == 1 ? "rank 0 sent 2 step windows, rank 1 has 3"
                                               : "rank 1 sent 3 step windows, rank " + std::to_string(w.rank()) +
                                                     " has 2";
    EXPECT_NE(std::string(e.what()).find(expected), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace ft::test
