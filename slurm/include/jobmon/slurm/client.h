#pragma once
// Asking the controller: the one place that runs Slurm's commands for job and
// node records, for every caller (the monitor, `jobmon status`, `triage`,
// `diagnose`, `check`). An answer that is not a real one — a non-zero exit,
// no answer within the timeout, `errors` in the JSON (22.05's squeue exits 0
// with errors and no jobs while slurmctld is down) — is an error, never an
// empty list: a caller must not take "Slurm did not answer" for "no jobs".

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "jobmon/common/expected.h"
#include "jobmon/slurm/jobs.h"
#include "jobmon/slurm/nodes.h"

namespace jobmon::slurm {

struct Commands {
  std::string squeue = "squeue";
  std::string scontrol = "scontrol";
  std::string sinfo = "sinfo";  // node records where scontrol has no --json (22.05)
  double timeout_seconds = 10;
  std::string scancel = "scancel";  // recovery's signal and cancel (monitor/recovery.h)
};

// Slurm's version line ("slurm 25.11.7", "slurm-wlm 22.05.8", from
// `scontrol --version`, `sbatch --version`, `slurmd -V`) as its
// SLURM_VERSION_NUMBER, 0xMMmmuu (a missing micro is 0); nullopt when not
// that shape.
std::optional<uint32_t> ParseSlurmVersion(std::string_view version_output);
// The series of such a line: 2205 for 22.05.8; 0 when not that shape.
int ParseSlurmSeries(const std::string& version_output);

class Client {
 public:
  explicit Client(Commands commands) : commands_(std::move(commands)) {}

  // Every job the controller knows, ended ones within its MinJobAge:
  // `squeue -t all --json` (24.11 and 25.11 list only active jobs without
  // it; 22.05 and 23.11 list every job: tests/fixtures/slurm/).
  Expected<std::vector<SlurmJob>> Jobs() const;
  // Every node's record: `scontrol show nodes --json`, or on 22.05
  // `sinfo --json`.
  Expected<std::vector<SlurmNode>> Nodes() const;
  // The series of the Slurm commands found (2511 for 25.11), asked once;
  // 0 when `scontrol --version` did not answer.
  int Series() const;

  // Acting on a job, for recovery (monitor/include/jobmon/monitor/recovery.h),
  // by Slurm's own commands; each an error when the command did not succeed.
  // `scancel --signal=SIG JOB`: the job's steps, not its batch shell (whose
  // default for USR1 is to die).
  Expected<void> SignalJobSteps(uint32_t job_id, const std::string& signal) const;
  // Requeued held, the node excluded (when one is named), then released: a
  // running job's ExcNodeList can only change while it is pending.
  Expected<void> RequeueExcluding(uint32_t job_id, const std::string& node) const;
  // The reason in the job's Comment, then `scancel JOB`.
  Expected<void> CancelJob(uint32_t job_id, const std::string& reason) const;
  Expected<void> DrainNode(const std::string& node, const std::string& reason) const;

  const Commands& commands() const { return commands_; }

 private:
  // `expected_bytes`: room made for the answer at once (its last size).
  Expected<std::string> Run(const std::vector<std::string>& argv, size_t expected_bytes = 0,
                            std::string* room = nullptr) const;

  Commands commands_;
  mutable std::optional<int> series_;
  mutable size_t last_jobs_bytes_ = 0;  // squeue's last answer: 28 MiB at 10,000 jobs
  mutable std::string jobs_room_;       // its memory, which the next answer is read into
  mutable JobsReader jobs_reader_;      // what the last answer said of each job
};

}  // namespace jobmon::slurm
