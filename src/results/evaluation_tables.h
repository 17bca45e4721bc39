// The tables and summary line of an evaluation: per-class scores, the confusion matrix with class names
// (rows true, columns predicted), for `fusetrain evaluate` and `fusetrain report --confusion`.
#pragma once

#include <string>

#include "results/evaluation_record.h"

namespace ft {

// One row per class: images, predicted, precision, recall and one-vs-rest accuracy in percent.
std::string class_table(const EvaluationRecord& record, bool csv);
// The confusion matrix: a row per true class, a column per predicted class, then the row's total.
std::string confusion_table(const EvaluationRecord& record, bool csv);
// "evaluate: test accuracy 80.15% (top-5 99.10%), loss 0.5432 over 2000 images"
std::string summary_line(const EvaluationSummary& summary);

}  // namespace ft
