// The per-class arithmetic of `fusetrain evaluate`: precision, recall and one-vs-rest accuracy from a
// confusion matrix worked by hand, the empty-row and empty-column conventions, and top-k's k.
#include <gtest/gtest.h>

#include "results/class_metrics.h"
#include "runtime/error.h"

namespace ft {
namespace {

// Rows true class, columns predicted: 20 images, 12 correct.
const std::vector<std::int64_t> kConfusion = {5, 1, 0,   //
                                              2, 3, 1,   //
                                              0, 4, 4};

TEST(ClassMetrics, PrecisionRecallAccuracyFromTheMatrix) {
  const ClassScores s = class_scores(kConfusion, 3);
  EXPECT_EQ(s.support, (std::vector<std::int64_t>{6, 6, 8}));
  EXPECT_EQ(s.predicted, (std::vector<std::int64_t>{7, 8, 5}));
  EXPECT_DOUBLE_EQ(s.precision[0], 5.0 / 7);
  EXPECT_DOUBLE_EQ(s.precision[1], 3.0 / 8);
  EXPECT_DOUBLE_EQ(s.precision[2], 4.0 / 5);
  EXPECT_DOUBLE_EQ(s.recall[0], 5.0 / 6);
  EXPECT_DOUBLE_EQ(s.recall[1], 3.0 / 6);
  EXPECT_DOUBLE_EQ(s.recall[2], 4.0 / 8);
  // One-vs-rest: class 0 has 2 false positives and 1 false negative of 20; class 1: 5 and 3; class 2: 1 and 4.
  EXPECT_DOUBLE_EQ(s.accuracy[0], 17.0 / 20);
  EXPECT_DOUBLE_EQ(s.accuracy[1], 12.0 / 20);
  EXPECT_DOUBLE_EQ(s.accuracy[2], 15.0 / 20);
  EXPECT_EQ(confusion_correct(kConfusion, 3), 12);
  EXPECT_EQ(confusion_total(kConfusion), 20);
}

TEST(ClassMetrics, ClassesNeverSeenOrPredictedScoreZero) {
  // Class 1 has no images and is never predicted; class 2 has images but is never predicted.
  const std::vector<std::int64_t> confusion = {4, 0, 0,  //
                                               0, 0, 0,  //
                                               3, 0, 0};
  const ClassScores s = class_scores(confusion, 3);
  EXPECT_DOUBLE_EQ(s.precision[1], 0.0);
  EXPECT_DOUBLE_EQ(s.recall[1], 0.0);
  EXPECT_DOUBLE_EQ(s.accuracy[1], 1.0);  // every "is it 1?" answer (no) is right
  EXPECT_DOUBLE_EQ(s.precision[2], 0.0);
  EXPECT_DOUBLE_EQ(s.recall[2], 0.0);
  EXPECT_DOUBLE_EQ(s.precision[0], 4.0 / 7);
  EXPECT_DOUBLE_EQ(s.recall[0], 1.0);
}

TEST(ClassMetrics, MalformedMatricesAreErrors) {
  EXPECT_THROW(class_scores(kConfusion, 4), Error);
  EXPECT_THROW(class_scores({1, -1, 0, 2}, 2), Error);
  EXPECT_THROW(class_scores({}, 0), Error);
}

TEST(ClassMetrics, TopKIsFiveOrTheClassCount) {
  EXPECT_EQ(top_k_of(10), 5);
  EXPECT_EQ(top_k_of(5), 5);
  EXPECT_EQ(top_k_of(3), 3);
  EXPECT_EQ(top_k_of(1), 1);
}

}  // namespace
}  // namespace ft
