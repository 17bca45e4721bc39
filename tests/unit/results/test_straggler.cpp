// Tests of results/straggler.cpp against steps worked out by hand: the leave-one-out median, the threshold and
// "most steps" at their edges, the tie between two slow ranks, the others' wait beyond the straggler's own.
#include "results/straggler.h"

#include <gtest/gtest.h>

namespace ft {
namespace {

// A rank whose compute is `slow` in the first `slow_steps` of `steps` and `base` after, waiting `wait` in those.
RankSteps rank(int steps, int slow_steps, double slow, double base = 1.0, double wait = 0.0) {
  RankSteps r;
  for (int s = 0; s < steps; ++s) {
    r.compute_s.push_back(s < slow_steps ? slow : base);
    r.wait_s.push_back(s < slow_steps ? wait : 0.0);
  }
  return r;
}

TEST(Straggler, NamesTheRankTheOthersWaitFor) {
  // Rank 1 computes 1.5 s in 8 of 10 steps; rank 0 computes 1 s and waits 0.5 s in those.
  const StragglerVerdict v = find_straggler({rank(10, 8, 1.0, 1.0, 0.5), rank(10, 8, 1.5)}, 0.2);
  EXPECT_EQ(v.rank, 1);
  EXPECT_DOUBLE_EQ(v.slow_share, 0.8);
  EXPECT_DOUBLE_EQ(v.excess, 0.5);                     // ratios 0 (twice) and 0.5 (8 times): median 0.5
  EXPECT_DOUBLE_EQ(v.wait_share, 4.0 / (10.0 + 4.0));  // 8 x 0.5 s waited over 10 s of compute and 4 s of wait
  EXPECT_DOUBLE_EQ(v.rank_slow_share[0], 0);
  EXPECT_DOUBLE_EQ(v.rank_excess[0], -1.0 / 3);        // 1 / 1.5 - 1 in 8 of 10 steps
}

TEST(Straggler, AStepExactlyAtTheThresholdIsNotSlow) {
  EXPECT_EQ(find_straggler({rank(4, 0, 1.0), rank(4, 4, 1.25)}, 0.25).rank, -1);
  EXPECT_EQ(find_straggler({rank(4, 0, 1.0), rank(4, 4, 1.25)}, 0.24).rank, 1);
}

TEST(Straggler, HalfTheStepsIsNotMost) {
  EXPECT_EQ(find_straggler({rank(10, 0, 1.0), rank(10, 5, 2.0)}, 0.2).rank, -1);
  EXPECT_EQ(find_straggler({rank(10, 0, 1.0), rank(10, 6, 2.0)}, 0.2).rank, 1);
}

TEST(Straggler, EachRankAgainstTheMedianOfTheOthers) {
  // Four ranks, rank 2 twice as slow: against the others' median (1 s) it is slow, and they are not.
  const StragglerVerdict v = find_straggler({rank(3, 0, 1), rank(3, 0, 1), rank(3, 3, 2), rank(3, 0, 1)}, 0.2);
  EXPECT_EQ(v.rank, 2);
  EXPECT_DOUBLE_EQ(v.excess, 1.0);
  for (int r : {0, 1, 3}) EXPECT_EQ(v.rank_slow_share[r], 0) << r;
}

TEST(Straggler, TheOthersMedianIsTakenInOrderOfSizeNotOfRank) {
  // Computes 3, 1 and 2 s in every step. Rank 0 against {1, 2}: lower middle 1, excess 2. Rank 1 against {3, 2},
  // in order {2, 3}: 2, excess -0.5. Rank 2 against {3, 1}, in order {1, 3}: 1, excess 1, slow as well.
  const StragglerVerdict v = find_straggler({rank(2, 2, 3), rank(2, 2, 1), rank(2, 2, 2)}, 0.2);
  EXPECT_EQ(v.rank, 0);
  EXPECT_EQ(v.rank_excess, (std::vector<double>{2.0, -0.5, 1.0}));
  EXPECT_EQ(v.rank_slow_share, (std::vector<double>{1.0, 0.0, 1.0}));
}

TEST(Straggler, OfTwoSlowRanksTheSlowerIsNamed) {
  // Ranks 2 and 3 slow in every step against the others' median (1 s): 3 s beats 2 s on excess.
  const StragglerVerdict v = find_straggler({rank(5, 0, 1), rank(5, 0, 1), rank(5, 5, 2), rank(5, 5, 3)}, 0.2);
  EXPECT_EQ(v.rank, 3);
  EXPECT_DOUBLE_EQ(v.rank_slow_share[2], 1);
}

// One rank or no steps: no straggler, and every rank's own figures are zero (they reach the results file).
TEST(Straggler, OneRankOrNoStepsNamesNone) {
  const StragglerVerdict one = find_straggler({rank(5, 5, 9)}, 0.2);
  EXPECT_EQ(one.rank, -1);
  EXPECT_EQ(one.rank_slow_share, std::vector<double>{0.0});
  EXPECT_EQ(one.rank_excess, std::vector<double>{0.0});
  const StragglerVerdict no_steps = find_straggler({RankSteps{}, RankSteps{}}, 0.2);
  EXPECT_EQ(no_steps.rank, -1);
  EXPECT_EQ(no_steps.rank_slow_share, std::vector<double>(2, 0.0));
  EXPECT_EQ(no_steps.rank_excess, std::vector<double>(2, 0.0));
  EXPECT_EQ(find_straggler({rank(0, 0, 1), rank(0, 0, 1)}, 0.2).rank, -1);
  EXPECT_EQ(find_straggler({}, 0.2).rank, -1);
}

TEST(Straggler, TheLineSaysWhoAndHowMuch) {
  StragglerVerdict v;
  EXPECT_EQ(straggler_line(v, 0.2, {}),
            "straggler: none (no rank's compute was more than 20% above the others' median in most steps)");
  v.rank = 1, v.excess = 0.48, v.slow_share = 0.95, v.wait_share = 0.314;
  EXPECT_EQ(straggler_line(v, 0.2, {"node1", "node2"}),
            "straggler: rank 1 (node2) computed 48% above the others' median in 95% of steps; the other ranks spent "
            "31% of their step waiting for it");
}

}  // namespace
}  // namespace ft
