#pragma once
// Finding a job's log and directory (reference step 1): a log file, a job
// dir (follow its `log` symlink), or a Slurm job id under an outputs dir.

#include <optional>
#include <string>
#include <vector>

#include "jobmon/common/expected.h"

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

// "JobState=RUNNING" from `scontrol show job -o`; nullopt if absent.
std::optional<std::string> ParseScontrolJobState(const std::string& text);
// Asks scontrol (2 s deadline); nullopt when Slurm is unreachable.
std::optional<std::string> QuerySlurmJobState(const std::string& job_id);

}  // namespace jobmon::triage
