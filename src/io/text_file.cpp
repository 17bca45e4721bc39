// Whole-file reads with C stdio, so that the reason for a failure (errno) reaches the message.
#include "io/text_file.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>

#include "runtime/error.h"

namespace ft {

std::string read_text_file(const std::string& path, const std::string& what) {
  errno = 0;
  const std::unique_ptr<std::FILE, int (*)(std::FILE*)> file(std::fopen(path.c_str(), "rb"), &std::fclose);
  FT_REQUIRE(file, "cannot read ", what, " ", path, ": ", std::strerror(errno));
  std::string text;
  char buffer[1 << 16];
  for (std::size_t n; (n = std::fread(buffer, 1, sizeof(buffer), file.get())) > 0;) text.append(buffer, n);
  FT_REQUIRE(!std::ferror(file.get()), "cannot read ", what, " ", path, ": ", std::strerror(errno));
  return text;
}

}  // namespace ft
