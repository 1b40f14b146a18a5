// jobmon: the command-line tool over the monitor library.

#include <CLI/CLI.hpp>
#include <iostream>

#include "alert_command.h"
#include "check_command.h"
#include "cli_common.h"
#include "diagnose_command.h"
#include "monitor_commands.h"
#include "triage_command.h"

int main(int argc, char** argv) {
  CLI::App app{"jobmon: observability and triage for Slurm GPU training jobs", "jobmon"};
  app.set_version_flag("--version", "jobmon " JOBMON_VERSION);
  app.require_subcommand(1);
  std::vector<std::function<int()>> commands = {
      jobmon::cli::AddTriageCommand(app), jobmon::cli::AddDiagnoseCommand(app),
      jobmon::cli::AddStatusCommand(app), jobmon::cli::AddListCommand(app),
      jobmon::cli::AddWatchCommand(app),  jobmon::cli::AddHoldCommand(app),
      jobmon::cli::AddAlertCommand(app),  jobmon::cli::AddCheckCommand(app)};
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help prints and succeeds; every other parse error is a usage error (2).
    int code = app.exit(e);
    return code == 0 ? jobmon::cli::kOk : jobmon::cli::kUsageError;
  }
  try {
    for (const auto& command : commands) {
      int code = command();
      if (code != jobmon::cli::kNotThisOne) return code;
    }
  } catch (const std::exception& e) {
    std::cerr << "jobmon: internal error: " << e.what() << "\n";
    return jobmon::cli::kFailed;
  }
  return jobmon::cli::kUsageError;
}
