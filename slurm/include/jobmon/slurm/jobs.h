#pragma once
// Jobs as Slurm reports them, from the JSON of `squeue -t all --json` or
// `scontrol show job --json`: the one reading of Slurm's job records for the
// monitor, `jobmon status`, `triage`, `diagnose` and `check`. Every shape
// from Slurm 22.05 (openapi/v0.0.38: plain numbers, a state string, the wait
// status as exit code) to 25.11 (data_parser v0.0.44: `{set, infinite,
// number}` objects, state lists, `stdout_expanded`) is accepted; the
// fixtures of every version are in tests/fixtures/slurm/.
// A structured source on purpose: in `scontrol -o show job`'s Key=Value text
// a job name, comment or mail user containing " StdOut=/etc/shadow"
// overrides the real field, so a user could steer what the daemon reads as
// root. Parsing is pure.

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "jobmon/common/expected.h"
#include "jobmon/common/slurm_pattern.h"

namespace jobmon::slurm {

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
  // The batch script's output as Slurm writes it ("" when none): Slurm's own
  // expansion (`stdout_expanded`, 25.05+) or ExpandStdoutPattern's.
  std::string std_out;
  std::string work_dir;
  std::optional<double> start_time, end_time;  // unix seconds; nullopt: not (yet) known
  std::string exit_code;  // "0:0" (exit status:signal) as scontrol shows it; "" when absent
  // An array task: its array's job id and its index; a heterogeneous job's
  // component: the leader's id and the component's offset (0 for the leader,
  // the only one with a batch script and so a log).
  uint32_t array_job_id = 0;
  std::optional<uint32_t> array_task_id;
  std::optional<uint32_t> het_job_id, het_job_offset;
};

// A Slurm answer: its records and the `errors` it carries. Slurm 22.05's
// `squeue --json` exits 0 with `"errors": [...]` and no jobs when the
// controller is down; such an answer says nothing about the jobs.
struct JobsAnswer {
  std::vector<SlurmJob> jobs;
  std::vector<std::string> errors;
};

// The "jobs" of the document; a job without id, user id or group id is
// skipped. A heterogeneous job's later components take their leader's
// output path when the leader is in the same answer. An error when the text
// is not that document.
// `text` by value: a caller that moves a large answer in has it read in place.
Expected<JobsAnswer> ParseJobsJson(std::string text);
// The same, reading the caller's `text` in place and leaving it as it was
// (or with invalid UTF-8 replaced): its memory can hold the next answer.
Expected<JobsAnswer> ParseJobsJsonInPlace(std::string& text);

// Successive answers of one Slurm, read as ParseJobsJsonInPlace reads
// each: a job whose fields read are as they were in the last answer (a
// fingerprint of their names and values) is taken from it instead of being
// converted and read again. At 10,000 jobs that was most of reading an
// answer, and most jobs are as they were a poll ago.
class JobsReader {
 public:
  Expected<JobsAnswer> Read(std::string& text);

  // The last answer's jobs by fingerprint (nullopt: skipped, no owner).
  using Known = std::unordered_map<uint64_t, std::optional<SlurmJob>>;

 private:
  Known last_;
};

// A job's values for Slurm's filename patterns (%j %A %a %u %x, %N as the
// batch host when known): common/include/jobmon/common/slurm_pattern.h.
slurm_pattern::JobFields PatternFields(const SlurmJob& job, const std::string& batch_host = "");

// The job's stdout as Slurm names it, for Slurm versions whose JSON has no
// `stdout_expanded`: slurm_pattern::StdoutPath of the pattern (Slurm's
// default, slurm-%j.out or slurm-%A_%a.out, when empty).
std::string ExpandStdoutPattern(const std::string& pattern, const SlurmJob& job,
                                const std::string& batch_host = "");

bool IsTerminalState(std::string_view state);

}  // namespace jobmon::slurm
