// The one shape of a failure on stderr for every program and subcommand: "<who>: <kind>: <text>".
// LibTorch-free so that fusetrain-prep uses it too; fusetrain's commands go through app/error_text.h.
#pragma once

#include <string>

namespace ft {

// Prints "<who>: <kind>: <text>" and a newline on stderr; `who` is e.g. "fusetrain sweep".
void print_failure(const std::string& who, const std::string& text, const char* kind = "error");

}  // namespace ft
