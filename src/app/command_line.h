// Shared command-line plumbing of the subcommands: option parsing that reports errors one way, and the
// "CxHxW" image shapes the benchmarks take.
#pragma once

#include <boost/program_options.hpp>

#include <string>
#include <vector>

#include "models/network.h"

namespace ft {

// Parses argv against `options` into `vm`; on a usage error prints "<command>: <error>" and returns false
// (the caller exits 2).
bool parse_command_line(const boost::program_options::options_description& options, int argc, char** argv,
                        boost::program_options::variables_map& vm, const char* command,
                        const boost::program_options::positional_options_description* positional = nullptr);

// "3x32x32" -> channels 3, height 32, width 32 (classes keep their default); throws ft::Error otherwise.
InputShape parse_image_shape(const std::string& text);

}  // namespace ft
