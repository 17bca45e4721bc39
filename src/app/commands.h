// The table of fusetrain subcommands. Each runs with argv[0] = its own name and returns the exit status.
// Errors inside a command surface as ft::Error and are printed by run_guarded (commands.cpp).
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

int train_command(int argc, char** argv);
int report_command(int argc, char** argv);
int bench_command(int argc, char** argv);
int info_command(int argc, char** argv);
int sweep_command(int argc, char** argv);
int inspect_command(int argc, char** argv);

}  // namespace ft
