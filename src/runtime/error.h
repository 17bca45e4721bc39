// Error type and checking macros shared by every layer: a failed library call or a violated
// precondition becomes an ft::Error carrying the source location and a message that names what is wrong.
#pragma once

#include <sstream>
#include <stdexcept>
#include <string>

namespace ft {

// A user-facing failure: the message already says which file, key or rank is at fault.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// An error every rank raised at the same point from the same shared decision (a broadcast verdict): rank 0
// reports it once and every rank ends normally, where any other error aborts the job from the rank it hit.
class SharedError : public Error {
 public:
  using Error::Error;
};

[[noreturn]] void throw_error(const char* file, int line, const std::string& message);

// Builds a message from streamable parts: ft::cat("shard ", path, " has ", n, " images").
template <typename... Parts>
std::string cat(const Parts&... parts) {
  std::ostringstream out;
  (out << ... << parts);
  return out.str();
}

}  // namespace ft

// A precondition on input (config, data, command line). The message is shown to the user as is.
#define FT_REQUIRE(cond, ...)                         \
  do {                                                \
    if (!(cond)) throw ::ft::Error(::ft::cat(__VA_ARGS__)); \
  } while (0)

// An internal invariant or library failure: the message carries file and line.
#define FT_CHECK(cond, ...)                                                      \
  do {                                                                           \
    if (!(cond)) ::ft::throw_error(__FILE__, __LINE__, ::ft::cat(__VA_ARGS__)); \
  } while (0)
