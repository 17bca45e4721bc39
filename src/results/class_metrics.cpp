// Precision, recall and one-vs-rest accuracy per class from a confusion matrix: plain counting, kept apart
// from the scoring on the device so that the arithmetic is tested on its own.
#include "results/class_metrics.h"

#include <algorithm>

#include "runtime/error.h"

namespace ft {
namespace {

double ratio(std::int64_t part, std::int64_t whole) {
  return whole > 0 ? static_cast<double>(part) / static_cast<double>(whole) : 0.0;
}

}  // namespace

ClassScores class_scores(const std::vector<std::int64_t>& confusion, int classes) {
  const auto k = static_cast<std::size_t>(std::max(classes, 0));
  FT_REQUIRE(classes > 0 && confusion.size() == k * k, "confusion matrix of ", confusion.size(),
             " counts for ", classes, " classes (needs ", k * k, ")");
  ClassScores s;
  s.support.assign(k, 0);
  s.predicted.assign(k, 0);
  for (std::size_t t = 0; t < k; ++t)
    for (std::size_t p = 0; p < k; ++p) {
      const std::int64_t n = confusion[t * k + p];
      FT_REQUIRE(n >= 0, "confusion matrix count [", t, "][", p, "] is negative (", n, ")");
      s.support[t] += n;
      s.predicted[p] += n;
    }
  const std::int64_t total = confusion_total(confusion);
  for (std::size_t c = 0; c < k; ++c) {
    const std::int64_t hits = confusion[c * k + c];
    const std::int64_t wrong = (s.predicted[c] - hits) + (s.support[c] - hits);  // false positives + negatives
    s.precision.push_back(ratio(hits, s.predicted[c]));
    s.recall.push_back(ratio(hits, s.support[c]));
    s.accuracy.push_back(ratio(total - wrong, total));
  }
  return s;
}

std::int64_t confusion_correct(const std::vector<std::int64_t>& confusion, int classes) {
  std::int64_t correct = 0;
  const auto k = static_cast<std::size_t>(classes);
  for (std::size_t c = 0; c < k && c * k + c < confusion.size(); ++c) correct += confusion[c * k + c];
  return correct;
}

std::int64_t confusion_total(const std::vector<std::int64_t>& confusion) {
  std::int64_t total = 0;
  for (const auto n : confusion) total += n;
  return total;
}

int top_k_of(int classes) { return std::min(5, classes); }

}  // namespace ft
