// Out-of-line construction of located errors, so that the macros in error.h stay small at each call site.
// The location is a suffix: the user reads what went wrong first, where in the source second.
#include "runtime/error.h"

namespace ft {

void throw_error(const char* file, int line, const std::string& message) {
  std::string where = file;
  const auto slash = where.find("src/");
  if (slash != std::string::npos) where = where.substr(slash + 4);
  throw Error(cat(message, " [", where, ":", line, "]"));
}

}  // namespace ft
