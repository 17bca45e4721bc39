// Shared by the libFuzzer targets: a private scratch folder to lay fuzz input out as files, and the one
// rule every target checks, that bad input may only ever surface as ft::Error (anything else aborts).
#pragma once

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <fstream>
#include <string>
#include <typeinfo>

#include "runtime/error.h"

namespace ft::fuzz {

// A folder under $TMPDIR unique to this process, emptied before each input and removed at exit.
class Scratch {
 public:
  Scratch() {
    const char* tmp = std::getenv("TMPDIR");
    root_ = std::filesystem::path(tmp && *tmp ? tmp : "/tmp") / ("ft-fuzz-" + std::to_string(::getpid()));
  }
  ~Scratch() {
    std::error_code ec;
    std::filesystem::remove_all(root_, ec);
  }
  // Removes whatever the previous input left and returns the empty folder.
  const std::filesystem::path& fresh() {
    std::filesystem::remove_all(root_);
    std::filesystem::create_directories(root_);
    return root_;
  }
  void write(const std::string& relative, const std::string& bytes) const {
    const auto path = root_ / relative;
    std::filesystem::create_directories(path.parent_path());
    std::ofstream(path, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  }

 private:
  std::filesystem::path root_;
};

// Runs body; ft::Error is the expected outcome of bad input, any other exception is a finding.
// FT_FUZZ_VERBOSE=1 prints each ft::Error and each accepted input, to check what a corpus reaches.
template <typename Body>
void only_ft_error(Body&& body) {
  try {
    body();
  } catch (const ft::Error& e) {
    if (std::getenv("FT_FUZZ_VERBOSE")) std::fprintf(stderr, "ft::Error: %s\n", e.what());
    return;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "FUZZ FINDING: %s escaped instead of ft::Error: %s\n", typeid(e).name(), e.what());
    std::abort();
  } catch (...) {
    std::fprintf(stderr, "FUZZ FINDING: a non-std exception escaped instead of ft::Error\n");
    std::abort();
  }
  if (std::getenv("FT_FUZZ_VERBOSE")) std::fprintf(stderr, "accepted\n");
}

}  // namespace ft::fuzz
