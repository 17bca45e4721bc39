// How every fusetrain subcommand reports an exception: LibTorch errors lose their C++ backtrace (kept for
// developers only when FUSETRAIN_BACKTRACE is set), everything else prints its message.
#pragma once

#include <exception>
#include <string>

namespace ft {

// The text a user sees for `e`.
std::string error_text(const std::exception& e);

// Prints "<who>: <kind>: <error_text(e)>" on stderr (runtime/error_report.h) and returns `status`.
int report_error(const std::string& who, const std::exception& e, int status = 1, const char* kind = "error");

}  // namespace ft
