#pragma once
// "Triage this job": the one entry point of `jobmon triage`, `jobmon
// status`, `jobmon diagnose` and the daemon's end-of-job report. Each caller
// scans the log its own way (whole, head and tail, bounded, as the job's
// user), since only it knows how the file may be read; what is known of the
// job besides its log, and what Slurm says of it, is gathered here.

#include <optional>
#include <string>

#include "jobmon/triage/job_status.h"
#include "jobmon/triage/log_scan.h"
#include "jobmon/triage/triage.h"

namespace jobmon::triage {

struct JobContext {
  std::string log_path;               // for the report
  std::optional<std::string> job_id;  // known outside the log (Slurm, the outputs dir)
  std::string job_dir;                // the outputs dir's job dir, "" when none
  // Slurm's word on the job, when the caller has it ...
  std::optional<std::string> slurm_state;
  std::optional<SlurmExitCode> slurm_exit_code;
  // ... or else asked of Slurm by the job's id (job_id, else the log's).
  bool ask_slurm = false;
  // Thresholds, clock, log mtime, kernel evidence: passed on to Analyze.
  AnalysisContext analysis;
};

TriageReport TriageJob(const ScanFacts& facts, const JobContext& job);

}  // namespace jobmon::triage
