#pragma once
// Running a short-lived helper (scontrol, squeue) and capturing its output,
// with a deadline: a hung helper is killed, never waited on forever.

#include <chrono>
#include <string>
#include <vector>

#include "jobmon/common/expected.h"

namespace jobmon {

struct CommandResult {
  int exit_code = -1;  // -1: killed by a signal (or the deadline)
  bool timed_out = false;
  std::string output;  // stdout, cut at max_output bytes
};

// argv[0] is looked up on PATH. stderr goes to /dev/null.
Expected<CommandResult> RunCommand(const std::vector<std::string>& argv,
                                   std::chrono::milliseconds timeout, size_t max_output = 1 << 20);

}  // namespace jobmon
