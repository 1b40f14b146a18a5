#pragma once
// Keeps one child process (the node's exporter) running for the job:
// restarts it with exponential backoff when it exits, gives up after
// `max_restarts`, and on SIGTERM/SIGINT stops it and exits. The child gets
// PR_SET_PDEATHSIG, and a restart only starts once the previous child has
// been reaped, so no listener is ever orphaned.

#include <chrono>
#include <string>
#include <vector>

namespace jobmon::lifecycle {

struct SupervisorOptions {
  std::vector<std::string> argv;  // argv[0]: path of the program
  int max_restarts = 5;
  std::chrono::milliseconds initial_backoff{1000};
  std::chrono::milliseconds max_backoff{30000};
  // A child that ran this long was healthy: the backoff starts over.
  std::chrono::milliseconds healthy_after{60000};
  std::chrono::milliseconds stop_grace{5000};
  std::string status_file;  // one line, rewritten on every change
};

// The delay before restart number `restart` (1-based).
std::chrono::milliseconds Backoff(const SupervisorOptions& options, int restart);

// Runs until stopped (returns 0) or until it gives up (returns 1). Blocks
// SIGTERM, SIGINT and SIGCHLD in the calling thread.
int RunSupervisor(const SupervisorOptions& options);

}  // namespace jobmon::lifecycle
