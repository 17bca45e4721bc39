// Numbers as config text: the shortest decimal form that reads back to the same double, shared by the
// config dump (--dry-run, results files) and the resume fingerprint's key-by-key comparison.
#pragma once

#include <string>

namespace ft {

// The shortest text that strtod reads back exactly: whole numbers below 1e15 as integers (60, not 6e+01),
// others in the "%.Ng" form with the fewest digits N: 0.9, not 0.90000000000000002; 1e-05, not
// 1.0000000000000001e-05.
std::string shortest_number(double value);

// `text` with a floating-point literal (one with '.', 'e' or 'E') rewritten by shortest_number
// (0.050000000000000003 -> 0.05); any other text (integers, names, lists) as it is.
std::string shortest_number_text(const std::string& text);

}  // namespace ft
