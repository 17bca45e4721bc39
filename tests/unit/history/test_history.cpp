// The history judgements at their edges, against the rules worked out here from their definitions: early
// stopping at patience 0, 1 and N with N and N + 1 evaluated epochs, ties and epochs without evaluation between;
// the overfitting onset with both losses rising or falling, the window exactly filled, evaluation every k epochs.
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "history/history.h"

namespace ft {
namespace {

// Epochs 1..n, each with (train loss, test loss); `evaluated` marks which were evaluated (all when empty).
std::vector<EpochRecord> epochs(const std::vector<std::pair<double, double>>& losses,
                                const std::vector<bool>& evaluated = {}) {
  std::vector<EpochRecord> out;
  for (std::size_t i = 0; i < losses.size(); ++i) {
    EpochRecord r;
    r.epoch = static_cast<int>(i) + 1;
    r.train_loss = losses[i].first;
    r.test_loss = losses[i].second;
    r.evaluated = evaluated.empty() || evaluated[i];
    out.push_back(r);
  }
  return out;
}

// Test losses only (train loss 1 throughout).
std::vector<EpochRecord> tests(const std::vector<double>& test_losses) {
  std::vector<std::pair<double, double>> losses;
  for (double t : test_losses) losses.push_back({1.0, t});
  return epochs(losses);
}

std::vector<const EpochRecord*> evaluated_only(const std::vector<EpochRecord>& h) {
  std::vector<const EpochRecord*> out;
  for (const auto& r : h)
    if (r.evaluated) out.push_back(&r);
  return out;
}

// Early stopping from its definition: the best test loss of all evaluated epochs was first reached more than
// `patience` evaluated epochs before the last one (a tie later is no better).
bool stops_by_definition(const std::vector<EpochRecord>& h, int patience) {
  const auto e = evaluated_only(h);
  if (patience <= 0 || e.empty()) return false;
  std::size_t best = 0;
  for (std::size_t i = 1; i < e.size(); ++i)
    if (e[i]->test_loss < e[best]->test_loss) best = i;
  return e.size() - 1 - best >= static_cast<std::size_t>(patience);
}

// The overfitting onset from its definition: the epoch that starts the earliest run of `window` evaluated epochs
// each with a higher test loss and a lower train loss than the evaluated epoch before it.
int onset_by_definition(const std::vector<EpochRecord>& h, int window) {
  const auto e = evaluated_only(h);
  for (std::size_t start = 1; start + static_cast<std::size_t>(window) <= e.size(); ++start) {
    bool all = true;
    for (std::size_t k = start; k < start + static_cast<std::size_t>(window); ++k)
      all = all && e[k]->test_loss > e[k - 1]->test_loss && e[k]->train_loss < e[k - 1]->train_loss;
    if (all) return e[start]->epoch;
  }
  return 0;
}

TEST(EarlyStopping, PatienceZeroNeverStops) {
  EXPECT_FALSE(should_stop_early(tests({1, 2, 3, 4, 5}), 0));
  EXPECT_FALSE(should_stop_early(tests({1, 2, 3, 4, 5}), -1));
  EXPECT_FALSE(should_stop_early({}, 0));
}

TEST(EarlyStopping, PatienceOne) {
  EXPECT_FALSE(should_stop_early({}, 1));
  EXPECT_FALSE(should_stop_early(tests({5}), 1));       // exactly 1 evaluated epoch: nothing to compare with
  EXPECT_TRUE(should_stop_early(tests({5, 6}), 1));     // 2: the second no better
  EXPECT_TRUE(should_stop_early(tests({5, 5}), 1));     // a tie is no better
  EXPECT_FALSE(should_stop_early(tests({5, 4}), 1));    // better
  EXPECT_FALSE(should_stop_early(tests({5, 6, 4}), 1)); // better than the best before it
  EXPECT_TRUE(should_stop_early(tests({5, 4, 4.5}), 1));
}

TEST(EarlyStopping, PatienceNWithExactlyNAndNPlusOneEvaluatedEpochs) {
  for (int n = 1; n <= 5; ++n) {
    std::vector<double> rising;
    for (int i = 0; i < n; ++i) rising.push_back(1.0 + i);
    EXPECT_FALSE(should_stop_early(tests(rising), n)) << "exactly " << n << " evaluated epochs, patience " << n;
    rising.push_back(1.0 + n);
    EXPECT_TRUE(should_stop_early(tests(rising), n)) << n + 1 << " evaluated epochs, none better after the first";
    rising.back() = 0.5;
    EXPECT_FALSE(should_stop_early(tests(rising), n)) << n + 1 << " evaluated epochs, the last the best";
    std::vector<double> flat(static_cast<std::size_t>(n) + 1, 2.0);
    EXPECT_TRUE(should_stop_early(tests(flat), n)) << n + 1 << " equal losses, patience " << n;
    flat.pop_back();
    EXPECT_FALSE(should_stop_early(tests(flat), n)) << n << " equal losses, patience " << n;
  }
}

TEST(EarlyStopping, EpochsWithoutEvaluationAreNotCounted) {
  // Evaluated: 3.0 (epoch 1), 2.0 (epoch 3), 2.5 (epoch 5); epochs 2 and 4 hold no test loss (0 would look best).
  const auto h = epochs({{1, 3.0}, {1, 0.0}, {1, 2.0}, {1, 0.0}, {1, 2.5}}, {true, false, true, false, true});
  EXPECT_TRUE(should_stop_early(h, 1));
  EXPECT_FALSE(should_stop_early(h, 2));  // 3 evaluated epochs, the best one 1 before the last
  const auto every_second = epochs({{1, 0.0}, {1, 2.0}, {1, 0.0}, {1, 2.5}}, {false, true, false, true});
  EXPECT_TRUE(should_stop_early(every_second, 1));
  EXPECT_FALSE(should_stop_early(every_second, 2));  // exactly 2 evaluated epochs
}

TEST(EarlyStopping, EveryShortHistoryFollowsTheDefinition) {
  // Every history of up to 6 epochs with test losses from {1, 2, 3}, every pattern of evaluated epochs.
  for (int length = 0; length <= 6; ++length) {
    int values = 1;
    for (int i = 0; i < length; ++i) values *= 3;
    for (int code = 0; code < values; ++code) {
      for (int mask = 0; mask < (1 << length); ++mask) {
        std::vector<std::pair<double, double>> losses;
        std::vector<bool> evaluated;
        for (int i = 0, c = code; i < length; ++i, c /= 3) {
          losses.push_back({1.0, 1.0 + c % 3});
          evaluated.push_back((mask >> i) & 1);
        }
        const auto h = epochs(losses, evaluated);
        for (int patience = 0; patience <= 6; ++patience)
          ASSERT_EQ(should_stop_early(h, patience), stops_by_definition(h, patience))
              << "length " << length << " losses " << code << " evaluated " << mask << " patience " << patience;
      }
    }
  }
}

TEST(OverfittingOnset, TestLossRisingWhileTrainLossFalls) {
  const auto h = epochs({{2.0, 1.0}, {1.5, 1.1}, {1.0, 1.2}, {0.5, 1.3}});
  EXPECT_EQ(overfitting_onset(h, 1), 2);
  EXPECT_EQ(overfitting_onset(h, 3), 2);  // the window exactly filled by the 4 epochs
  EXPECT_EQ(overfitting_onset(h, 4), 0);  // one epoch short
}

TEST(OverfittingOnset, BothLossesRisingIsDivergenceNotOverfitting) {
  EXPECT_EQ(overfitting_onset(epochs({{1.0, 1.0}, {1.5, 1.5}, {2.0, 2.0}, {3.0, 3.0}}), 1), 0);
  EXPECT_EQ(overfitting_onset(epochs({{1.0, 1.0}, {1.0, 1.5}, {1.0, 2.0}}), 1), 0);  // train loss flat
  // Train loss rises in the middle of the rise of the test loss: the run of falling train loss restarts.
  const auto h = epochs({{3.0, 1.0}, {2.0, 1.1}, {2.5, 1.2}, {1.5, 1.3}, {1.0, 1.4}});
  EXPECT_EQ(overfitting_onset(h, 2), 4);
  EXPECT_EQ(overfitting_onset(h, 3), 0);
}

TEST(OverfittingOnset, BothLossesFallingOrTestLossFlatIsNone) {
  EXPECT_EQ(overfitting_onset(epochs({{3.0, 3.0}, {2.0, 2.0}, {1.0, 1.0}}), 1), 0);
  EXPECT_EQ(overfitting_onset(epochs({{3.0, 1.0}, {2.0, 1.0}, {1.0, 1.0}}), 1), 0);
  EXPECT_EQ(overfitting_onset({}, 1), 0);
  EXPECT_EQ(overfitting_onset(epochs({{1.0, 1.0}}), 1), 0);
}

TEST(OverfittingOnset, EvaluationEveryKEpochs) {
  // Evaluated every 3rd epoch (3, 6, 9, 12); the others hold zeros that would break any run if counted.
  std::vector<std::pair<double, double>> losses;
  std::vector<bool> evaluated;
  const std::vector<std::pair<double, double>> judged = {{2.0, 1.0}, {1.8, 0.9}, {1.6, 1.0}, {1.4, 1.1}};
  for (const auto& l : judged) {
    losses.push_back({0, 0});
    losses.push_back({0, 0});
    losses.push_back(l);
    evaluated.insert(evaluated.end(), {false, false, true});
  }
  const auto h = epochs(losses, evaluated);
  EXPECT_EQ(overfitting_onset(h, 1), 9);
  EXPECT_EQ(overfitting_onset(h, 2), 9);  // epochs 9 and 12: the window exactly filled
  EXPECT_EQ(overfitting_onset(h, 3), 0);
}

TEST(OverfittingOnset, EveryShortHistoryFollowsTheDefinition) {
  // Every history of up to 4 epochs with train and test losses from {1, 2, 3}, every pattern of evaluated epochs.
  for (int length = 0; length <= 4; ++length) {
    int values = 1;
    for (int i = 0; i < length; ++i) values *= 9;
    for (int code = 0; code < values; ++code) {
      for (int mask = 0; mask < (1 << length); ++mask) {
        std::vector<std::pair<double, double>> losses;
        std::vector<bool> evaluated;
        for (int i = 0, c = code; i < length; ++i, c /= 9) {
          losses.push_back({1.0 + c % 3, 1.0 + c / 3 % 3});
          evaluated.push_back((mask >> i) & 1);
        }
        const auto h = epochs(losses, evaluated);
        for (int window = 1; window <= 4; ++window)
          ASSERT_EQ(overfitting_onset(h, window), onset_by_definition(h, window))
              << "length " << length << " losses " << code << " evaluated " << mask << " window " << window;
      }
    }
  }
}

}  // namespace
}  // namespace ft
