// The folders a test binary works with, read at run time from the environment ctest gives it (never compiled
// in): the same objects then serve every clone's build, and a binary carried to another host uses its folders.
#pragma once

#include <cstdlib>
#include <string>

#include "io/paths.h"

namespace ft::test {

// The variable's value, or `fallback` when it is unset or empty.
inline std::string env_or(const char* name, const std::string& fallback) {
  const char* value = std::getenv(name);
  return value != nullptr && *value != '\0' ? std::string(value) : fallback;
}

// FT_TEST_TMP: the tests' scratch folder (ctest: the build's tests/data), created on first use
// [$TMPDIR/fusetrain-tests, or /tmp/fusetrain-tests].
inline std::string temp_dir() {
  static const std::string dir = [] {
    const std::string d = env_or("FT_TEST_TMP", paths::join(env_or("TMPDIR", "/tmp"), "fusetrain-tests"));
    paths::create_directories(d);
    return d;
  }();
  return dir;
}

// FT_SOURCE_DIR: the checkout (configs/, tests/data/) [the nearest folder at or above the current one that
// holds configs/ and tests/unit/, else the current folder].
inline std::string source_dir() {
  const std::string given = env_or("FT_SOURCE_DIR", "");
  if (!given.empty()) return given;
  for (std::string dir = paths::current_dir(); !dir.empty() && dir != "/"; dir = paths::parent(dir))
    if (paths::is_directory(paths::join(dir, "configs")) && paths::is_directory(paths::join(dir, "tests/unit")))
      return dir;
  return paths::current_dir();
}

// FT_BINARY_DIR: the build (bin/fusetrain-prep) [the folder three levels above this binary, as for
// <build>/tests/unit/unit_tests].
inline std::string binary_dir() {
  return env_or("FT_BINARY_DIR", paths::parent(paths::parent(paths::parent(paths::self_executable()))));
}

// FT_FASHION_MNIST_DIR: Debian's dataset-fashion-mnist [/usr/share/datasets/fashion-mnist].
inline std::string fashion_mnist_dir() { return env_or("FT_FASHION_MNIST_DIR", "/usr/share/datasets/fashion-mnist"); }

}  // namespace ft::test
