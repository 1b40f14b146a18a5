#pragma once
// Running a short-lived helper (scontrol, squeue, a diagnosis as the job's
// user) and capturing its output, with a deadline: a hung helper is killed,
// never waited on forever. The helper leads its own process group, and the
// group is what is stopped, so whatever it started in that group stops too.

#include <atomic>
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "jobmon/common/expected.h"
#include "jobmon/common/user_file.h"

namespace jobmon {

struct CommandResult {
  int exit_code = -1;  // -1: killed by a signal (or the deadline)
  bool timed_out = false;
  bool cancelled = false;
  std::string output;  // stdout, cut at max_output bytes
};

struct CommandOptions {
  std::chrono::milliseconds timeout{10000};
  size_t max_output = 1 << 20;
  // The output's likely size (its last): room made at once, so a large
  // answer is not copied as it grows.
  size_t expected_output = 0;
  // A string whose memory the output is read into (it is moved from): a
  // caller asking the same large question again reuses the last answer's
  // pages instead of faulting fresh ones in.
  std::string* output_room = nullptr;
  // Run as this user (its primary group alone, no supplementary groups),
  // when we are root; ignored otherwise. The helper dies with us
  // (PR_SET_PDEATHSIG), so a killed daemon leaves no diagnosis running.
  std::optional<JobUser> run_as;
  // "K=V"; nullopt: ours, or MinimalEnvironment() (child_environment.h)
  // with run_as.
  std::optional<std::vector<std::string>> env;
  // Set by another thread: the helper is stopped as at the deadline.
  std::shared_ptr<const std::atomic<bool>> cancel;
  // At the deadline (or cancel): SIGTERM to the group, SIGKILL after this
  // long; zero: SIGKILL at once.
  std::chrono::milliseconds grace{0};
};

// argv[0] is looked up on PATH. stderr goes to /dev/null.
Expected<CommandResult> RunCommand(const std::vector<std::string>& argv,
                                   const CommandOptions& options);
Expected<CommandResult> RunCommand(const std::vector<std::string>& argv,
                                   std::chrono::milliseconds timeout, size_t max_output = 1 << 20);

// Becomes `user` for good, the whole process: supplementary groups
// dropped, then gid, then uid, and the environment reduced to
// MinimalEnvironment() (child_environment.h). A no-op unless we run as
// root. Call it while the process is single-threaded.
Expected<void> BecomeUser(const JobUser& user);

}  // namespace jobmon
