#pragma once
// Slurm's filename patterns, one reading for every component: the plugin
// (its diag_dir and the job's log for the manifest), the Slurm client
// (squeue's stdout before Slurm 25.05 expands it), the daemon and the CLI
// (where a job's diag dir is). Two readers with different rules would send
// the plugin and the daemon to different directories for the same job.

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "jobmon/common/expected.h"

namespace jobmon::slurm_pattern {

// What a pattern's letters stand for, for one job's batch script.
struct JobFields {
  uint32_t job_id = 0;
  uint32_t array_job_id = 0;              // %A; 0 outside an array (then the job id)
  std::optional<uint32_t> array_task_id;  // %a, %b
  std::string user;                       // %u
  std::string name;                       // %x
  std::string batch_host;                 // %N; "" while unknown: left as written
  std::string work_dir;                   // where a relative path lives
};

// The batch script's stdout/stderr pattern as slurmd expands it (Slurm
// 25.11 src/common/print_fields.c, expand_stdio_fields, for the batch step):
// %% %A %a %b %j %J %u %x %N, and for the batch step %t and %n as 0 and %s
// as "batch"; "%5j" pads to 5 digits (at most 10); a backslash anywhere
// turns expansion off (the backslashes dropped); any other letter (%r, %S:
// unknown here) stays as written. Relative results are in the work dir.
std::string ExpandStdio(const std::string& pattern, const JobFields& job);

// The job's stdout file: ExpandStdio of the pattern, or of Slurm's default
// ("slurm-%j.out", "slurm-%A_%a.out" in an array) when there is none.
std::string StdoutPath(const std::string& pattern, const JobFields& job);

// The directory part of a path ("/" for "/x"); the work dir when it has none.
std::string DirectoryOf(const std::string& path, const std::string& work_dir);

// The plugin's diag_dir pattern (common/include/jobmon/common/diag_dir.h):
// the job-level letters of ExpandStdio (%A %a %b %j %J %u %x %N, widths,
// %%) plus %o, the directory of the job's stdout. Step-level and unknown
// letters, a lone % at the end, or %N before the batch host is known are
// errors: a typo in plugstack.conf or jobmon.toml says so instead of
// sending the plugin and the daemon to different directories.
Expected<std::string> ExpandDiagDir(const std::string& pattern, const JobFields& job,
                                    const std::string& stdout_dir);

// A pattern of jobmon's own letters (the plugin's exporter_arg: %d %n %j):
// each %<letter> replaced by vars[letter], "%%" a literal %; an unknown
// letter, a width or a lone % at the end is an error, as in ExpandDiagDir.
Expected<std::string> ExpandLetters(const std::string& pattern,
                                    const std::map<char, std::string>& vars);

// Whether a diag_dir pattern can be expanded at all (for configuration
// checks): ExpandDiagDir's error for a sample job, or ok.
Expected<void> CheckDiagDirPattern(const std::string& pattern);

}  // namespace jobmon::slurm_pattern
