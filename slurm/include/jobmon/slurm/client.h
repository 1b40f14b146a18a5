#pragma once
// Asking the controller: the one place that runs Slurm's commands for job and
// node records, for every caller (the monitor, `jobmon status`, `triage`,
// `diagnose`, `check`). An answer that is not a real one — a non-zero exit,
// no answer within the timeout, `errors` in the JSON (22.05's squeue exits 0
// with errors and no jobs while slurmctld is down) — is an error, never an
// empty list: a caller must not take "Slurm did not answer" for "no jobs".

#include <optional>
#include <string>
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
};

// "22.05.8" -> 2205; 0 when not that shape. `scontrol --version` prints
// "slurm 25.11.7"; a vendor suffix ("slurm-wlm 22.05.8") is accepted.
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

  const Commands& commands() const { return commands_; }

 private:
  Expected<std::string> Run(const std::vector<std::string>& argv) const;

  Commands commands_;
  mutable std::optional<int> series_;
};

}  // namespace jobmon::slurm
