// The table of fusetrain subcommands. Each runs with argv[0] = its own name and returns the exit status.
// Commands report their errors through report_error (error_text.h); run_command catches any that escape.
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace ft {

struct Command {
  const char* name;
  std::function<int(int, char**)> run;
};

const std::vector<Command>& commands();

// Runs `command`; an exception it lets escape is reported as "fusetrain <name>: error: ..." (status 1).
int run_command(const Command& command, int argc, char** argv);

int train_command(int argc, char** argv);
int report_command(int argc, char** argv);
int bench_command(int argc, char** argv);
int info_command(int argc, char** argv);
int sweep_command(int argc, char** argv);
int inspect_command(int argc, char** argv);
int evaluate_command(int argc, char** argv);
int export_command(int argc, char** argv);
int predict_command(int argc, char** argv);
int plan_command(int argc, char** argv);

}  // namespace ft
