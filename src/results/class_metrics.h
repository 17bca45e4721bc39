// Per-class scores of a classifier from its confusion matrix (rows: true class, columns: predicted class),
// as `fusetrain evaluate` reports them.
#pragma once

#include <cstdint>
#include <vector>

namespace ft {

struct ClassScores {
  std::vector<double> precision;         // of class k: images predicted k that are k (0 when none is predicted k)
  std::vector<double> recall;            // of class k: images of class k predicted k (0 when none is of class k)
  std::vector<double> accuracy;          // one-vs-rest: images whose "is it k?" answer is right, of all images
  std::vector<std::int64_t> support;     // images of class k (row sums)
  std::vector<std::int64_t> predicted;   // images predicted k (column sums)
};

// `confusion`: classes x classes counts, row-major. Throws ft::Error when its size is not classes^2 or a
// count is negative.
ClassScores class_scores(const std::vector<std::int64_t>& confusion, int classes);

// The diagonal's sum (correctly classified images) and the sum of all counts (images).
std::int64_t confusion_correct(const std::vector<std::int64_t>& confusion, int classes);
std::int64_t confusion_total(const std::vector<std::int64_t>& confusion);

// How many of the top predictions count for "top-5": min(5, classes).
int top_k_of(int classes);

}  // namespace ft
