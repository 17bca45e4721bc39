// Writes failure reports in one piece, so that lines from several ranks or threads do not interleave
// within a report.
#include "runtime/error_report.h"

#include <cstdio>

namespace ft {

void print_failure(const std::string& who, const std::string& text, const char* kind) {
  const std::string line = who + ": " + kind + ": " + text + "\n";
  std::fputs(line.c_str(), stderr);
}

}  // namespace ft
