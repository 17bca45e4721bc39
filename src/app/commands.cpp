// The subcommand table used by main.cpp. Adding a subcommand means one line here and one file.
// Kept apart from main so that tests can look up commands by name.
#include "app/commands.h"

#include "app/error_text.h"

namespace ft {

const std::vector<Command>& commands() {
  static const std::vector<Command> table = {
      {"train", train_command},
      {"report", report_command},
      {"bench", bench_command},
      {"info", info_command},
      {"sweep", sweep_command},
      {"inspect", inspect_command},
      {"evaluate", evaluate_command},
      {"export", export_command},
      {"predict", predict_command},
      {"plan", plan_command},
  };
  return table;
}

int run_command(const Command& command, int argc, char** argv) {
  try {
    return command.run(argc, argv);
  } catch (const std::exception& e) {
    return report_error(std::string("fusetrain ") + command.name, e);
  }
}

}  // namespace ft
