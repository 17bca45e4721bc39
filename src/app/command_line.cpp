// Implementation of the shared command-line helpers; kept out of each subcommand so that they all
// report usage errors, medians and image shapes identically.
#include "app/command_line.h"

#include <algorithm>
#include <cstdio>

#include "runtime/error.h"

namespace ft {

bool parse_command_line(const boost::program_options::options_description& options, int argc, char** argv,
                        boost::program_options::variables_map& vm, const char* command,
                        const boost::program_options::positional_options_description* positional) {
  namespace po = boost::program_options;
  try {
    po::command_line_parser parser(argc, argv);
    parser.options(options);
    if (positional) parser.positional(*positional);
    po::store(parser.run(), vm);
    if (vm.count("help")) return true;  // the help needs none of the required options
    po::notify(vm);
    return true;
  } catch (const po::error& e) {
    std::fprintf(stderr, "%s: %s (see --help)\n", command, e.what());
    return false;
  }
}

InputShape parse_image_shape(const std::string& text) {
  InputShape shape;
  char tail = 0;
  FT_REQUIRE(std::sscanf(text.c_str(), "%dx%dx%d%c", &shape.channels, &shape.height, &shape.width, &tail) == 3 &&
                 shape.channels > 0 && shape.height > 0 && shape.width > 0,
             "--image must look like 3x32x32 (channels x height x width), got '", text, "'");
  return shape;
}

}  // namespace ft
