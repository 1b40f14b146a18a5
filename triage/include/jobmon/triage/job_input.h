#pragma once
// Finding a job's log and directory (docs/triage.md, step 1): a log file, a job
// dir (follow its `log` symlink), or a Slurm job id under an outputs dir.

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "jobmon/common/expected.h"
#include "jobmon/slurm/jobs.h"
#include "jobmon/triage/job_status.h"

namespace jobmon::triage {

struct JobInput {
  std::string log_path;
  std::string job_dir;  // empty when there is none
  std::optional<std::string> job_id;
};

Expected<JobInput> ResolveJobInput(const std::string& argument, const std::string& outputs_dir);

// Every job of an outputs dir: dirs with a `log` symlink, sorted by name.
// Dirs without one (shared checkpoint dirs) are skipped.
Expected<std::vector<JobInput>> ListOutputJobs(const std::string& outputs_dir);

// A Slurm job id as typed: decimal digits, 1..4294967295 (Slurm's ids are
// 32-bit). Anything else, 4294967297 included, is an error saying so rather
// than another job's id.
Expected<uint32_t> ParseJobId(std::string_view text);

// The job's state and exit code in Slurm's job JSON (slurm/jobs.h); nullopt
// if the job is not in it or the answer carries errors. (Not `scontrol -o`: there a job named
// "x JobState=COMPLETED" says so.)
std::optional<SlurmView> JobStateFromSqueueJson(const std::string& text, const std::string& job_id);
// Asks Slurm (slurm/client.h, 2 s deadline); nullopt when it is unreachable.
std::optional<SlurmView> QuerySlurmJobState(const std::string& job_id);

// The job as Slurm lists it (slurm/client.h: its user, StdOut, state);
// nullopt when Slurm is unreachable or no longer lists it. Never
// `scontrol -o` (slurm/jobs.h says why).
std::optional<slurm::SlurmJob> QuerySlurmJob(
    const std::string& job_id, std::chrono::milliseconds timeout = std::chrono::seconds(5));

}  // namespace jobmon::triage
