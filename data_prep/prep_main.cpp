// fusetrain-prep: the command-line front end of the data preparation (see cli_options.h for the
// options and prep_pipeline.h for the conversion). Prints a short summary of what it wrote.
#include <algorithm>
#include <cstdio>
#include <exception>
#include <iostream>
#include <string>
#include <vector>

#include "data_prep/cli_options.h"
#include "data_prep/prep_pipeline.h"
#include "runtime/error_report.h"

namespace {

std::string joined(const std::vector<double>& values) {
  std::string out;
  char text[32];
  for (double v : values) {
    std::snprintf(text, sizeof(text), "%s%.4f", out.empty() ? "" : " ", v);
    out += text;
  }
  return out;
}

std::string class_list(const std::vector<std::string>& names) {
  const std::size_t shown = std::min<std::size_t>(names.size(), 10);
  std::string out;
  for (std::size_t i = 0; i < shown; ++i) out += (i ? ", " : "") + names[i];
  if (shown < names.size()) out += ", ...";
  return out;
}

void print_summary(const ft::prep::PrepSummary& s, const std::string& output) {
  std::cout << "fusetrain-prep: " << s.dataset << ": train " << s.train_count << " images, test "
            << s.test_count << " images, shape " << s.height << "x" << s.width << "x" << s.channels
            << " (HxWxC), " << s.class_names.size() << " classes (" << class_list(s.class_names) << ")\n"
            << "  train mean " << joined(s.mean) << "  std " << joined(s.std) << "\n"
            << "  source sha256 " << s.source_sha256 << "\n"
            << "  wrote " << s.files.size() << " files to " << output << " in ";
  char seconds[32];
  std::snprintf(seconds, sizeof(seconds), "%.2f s", s.seconds);
  std::cout << seconds << ":\n";
  for (const auto& file : s.files) std::cout << "    " << file << "\n";
}

int fail(const char* what, int status) {
  ft::print_failure("fusetrain-prep", what);
  if (status == 2) std::cerr << "Run 'fusetrain-prep --help' for usage.\n";
  return status;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const ft::prep::CommandLine command = ft::prep::parse_command_line(argc, argv);
    if (command.help) {
      std::cout << command.help_text;
      return 0;
    }
    print_summary(ft::prep::run_prep(command.options), command.options.output);
    return 0;
  } catch (const ft::prep::UsageError& e) {
    return fail(e.what(), 2);
  } catch (const std::exception& e) {
    return fail(e.what(), 1);
  }
}
