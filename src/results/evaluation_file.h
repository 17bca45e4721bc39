// The HDF5 file of one `fusetrain evaluate` run: its /evaluation group (declared in results_fields.cpp),
// written atomically, and its reader for `fusetrain report --confusion`.
#pragma once

#include <string>

#include "results/evaluation_record.h"

namespace ft {

// Writes `record` to `path`: the file appears only once complete. Logits and labels are written when
// `record.logits` is not empty.
void write_evaluation(const std::string& path, const EvaluationRecord& record);
// Throws ft::Error naming the file and the field that is missing or malformed.
EvaluationRecord read_evaluation(const std::string& path);

}  // namespace ft
