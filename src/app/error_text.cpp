// LibTorch's c10::Error carries a backtrace in what(); users get what_without_backtrace() instead.
// Kept in one place so every subcommand reports errors the same way.
#include "app/error_text.h"

#include <c10/util/Exception.h>

#include <cstdlib>

#include "runtime/error_report.h"

namespace ft {

std::string error_text(const std::exception& e) {
  if (const auto* torch_error = dynamic_cast<const c10::Error*>(&e)) {
    if (std::getenv("FUSETRAIN_BACKTRACE")) return torch_error->what();
    return torch_error->what_without_backtrace();
  }
  return e.what();
}

int report_error(const std::string& who, const std::exception& e, int status, const char* kind) {
  print_failure(who, error_text(e), kind);
  return status;
}

}  // namespace ft
