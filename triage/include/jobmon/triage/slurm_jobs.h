#pragma once
// Jobs as Slurm reports them, from `squeue --json` (Slurm 22.05's
// openapi/v0.0.38 serializer; its squeue lists every job the controller
// knows, running and recently finished, whatever filter is given). A
// structured source on purpose: in `scontrol -o show job`'s Key=Value text a
// job name, comment or mail user containing " StdOut=/etc/shadow" overrides
// the real field, so a user could steer what the daemon reads as root.
// Parsing is pure and tested against output recorded from the dev cluster.

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "jobmon/common/expected.h"

namespace jobmon::triage {

struct SlurmJob {
  uint32_t job_id = 0;
  std::string name;
  std::string user;  // user_name
  uid_t uid = 0;     // the job's user: every file of the job is read as this user
  gid_t gid = 0;
  std::string state;  // RUNNING, PENDING, COMPLETED, FAILED, CANCELLED, TIMEOUT, NODE_FAIL, ...
  std::string node_list;
  int num_nodes = 0;
  std::string partition;
  std::string std_out, work_dir;  // std_out expanded as scontrol shows it ("" when none)
  std::optional<double> start_time, end_time;  // unix seconds; nullopt: not (yet) known
  std::string exit_code;  // "0:0" (exit status:signal) as scontrol shows it; "" when absent
};

// The "jobs" of `squeue --json`; a job without id, user id or group id is
// skipped. An error when the text is not that document.
Expected<std::vector<SlurmJob>> ParseSqueueJson(std::string_view text);

// Slurm's own expansion of a job's output path pattern (%j, %u, %x, %A, %a,
// %%, optional width digits; relative to the working directory), as
// scontrol shows StdOut. An empty pattern is Slurm's default,
// slurm-%j.out (slurm-%A_%a.out in an array).
std::string ExpandStdoutPattern(const std::string& pattern, const SlurmJob& job,
                                uint32_t array_job_id, std::optional<uint32_t> array_task_id);

bool IsTerminalState(std::string_view state);

}  // namespace jobmon::triage
