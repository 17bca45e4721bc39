// The fusetrain-prep command line: Boost.Program_options definitions, validation into PrepOptions,
// and the --help text. Usage errors are a separate type so that main can exit with status 2.
#pragma once

#include <string>

#include "data_prep/prep_pipeline.h"
#include "runtime/error.h"

namespace ft::prep {

// A bad command line (unknown option or --format, missing or invalid value): exit status 2.
class UsageError : public Error {
 public:
  using Error::Error;
};

struct CommandLine {
  bool help = false;      // --help given: print help_text and exit 0
  std::string help_text;  // always filled
  PrepOptions options;    // valid when help is false
};

// Parses argv (argv[0] is the program name); throws UsageError.
CommandLine parse_command_line(int argc, const char* const argv[]);

// cifar10, cifar100, stl10, idx or folder; throws UsageError naming the accepted values otherwise.
Format format_from_name(const std::string& name);

}  // namespace ft::prep
