// jobmon: the command-line tool over the monitor library.

#include <CLI/CLI.hpp>
#include <iostream>

#include "triage_command.h"

int main(int argc, char** argv) {
  CLI::App app{"jobmon: observability and triage for Slurm GPU training jobs"};
  app.require_subcommand(1);
  std::vector<std::function<int()>> commands = {jobmon::cli::AddTriageCommand(app)};
  CLI11_PARSE(app, argc, argv);
  try {
    for (const auto& command : commands) {
      int code = command();
      if (code >= 0) return code;
    }
  } catch (const std::exception& e) {
    std::cerr << "jobmon: internal error: " << e.what() << "\n";
    return 1;
  }
  return 2;
}
