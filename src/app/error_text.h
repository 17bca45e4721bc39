// The text a user sees for an exception: LibTorch errors lose their C++ backtrace (kept for developers
// only when FUSETRAIN_BACKTRACE is set), everything else prints its message.
#pragma once

#include <exception>
#include <string>

namespace ft {
std::string error_text(const std::exception& e);
}
