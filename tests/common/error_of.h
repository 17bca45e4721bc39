// What the ft::Error an action throws says, for the tests that check an error's words; "(no error)" when
// it throws none, so that a refusal that did not happen fails the caller's match and shows in its output.
#pragma once

#include <functional>
#include <string>

#include "runtime/error.h"

namespace ft::test {

inline std::string error_of(const std::function<void()>& action) {
  try {
    action();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace ft::test
