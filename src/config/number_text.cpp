// Shortest round-trip printing of config numbers: whole numbers as integers, others with the fewest
// significant digits (1 to 17; 17 always reads back) that strtod reads back bit for bit.
#include "config/number_text.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace ft {

std::string shortest_number(double value) {
  char buffer[32];
  // Whole numbers without an exponent: 60, not 6e+01 (which %.1g would print).
  if (std::fabs(value) < 1e15 && value == std::trunc(value)) {
    std::snprintf(buffer, sizeof buffer, "%.0f", value);
    return buffer;
  }
  for (int digits = 1; digits <= 17; ++digits) {
    std::snprintf(buffer, sizeof buffer, "%.*g", digits, value);
    if (std::strtod(buffer, nullptr) == value) break;
  }
  return buffer;
}

std::string shortest_number_text(const std::string& text) {
  if (text.find_first_of(".eE") == std::string::npos) return text;
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  if (end == text.c_str() || *end != '\0') return text;
  return shortest_number(value);
}

}  // namespace ft
