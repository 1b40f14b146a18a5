// jobmon-supervise: keeps a job's exporter running (restart with backoff,
// capped), used by spank_diag's job prolog.
#include <sys/prctl.h>

#include <CLI/CLI.hpp>
#include <iostream>

#include "jobmon/common/duration.h"
#include "lifecycle/supervisor.h"

int main(int argc, char** argv) {
  // It may hold what the prolog opened as root for the exporter (the
  // kernel log, --kmsg-fd): not to be taken by another process of the
  // job's user through ptrace or /proc/PID/fd.
  prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
  jobmon::lifecycle::SupervisorOptions options;
  std::string initial = "1s", maximum = "30s";
  CLI::App app{"jobmon-supervise: run a command, restart it with backoff when it exits",
               "jobmon-supervise"};
  app.set_version_flag("--version", "jobmon-supervise " JOBMON_VERSION);
  app.add_option("--max-restarts", options.max_restarts, "Give up after this many restarts")
      ->capture_default_str();
  app.add_option("--backoff", initial, "First restart delay (doubles each time)")
      ->capture_default_str();
  app.add_option("--max-backoff", maximum, "Longest restart delay")->capture_default_str();
  app.add_option("--status-file", options.status_file, "Rewritten with one status line");
  app.add_option("command", options.argv, "-- PROGRAM [ARGS...] (PROGRAM: an absolute path)")
      ->required();
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  auto first = jobmon::ParseDuration(initial);
  auto longest = jobmon::ParseDuration(maximum);
  if (!first || !longest) {
    std::cerr << "jobmon-supervise: error: "
              << (!first ? first.error().message : longest.error().message) << "\n";
    return 2;
  }
  if (options.argv.front().empty() || options.argv.front().front() != '/') {
    std::cerr << "jobmon-supervise: error: the program must be an absolute path\n";
    return 2;
  }
  options.initial_backoff = *first;
  options.max_backoff = *longest;
  return jobmon::lifecycle::RunSupervisor(options);
}
