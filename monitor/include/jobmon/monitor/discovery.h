#pragma once
// Which Slurm jobs the monitor follows, and where their files are. Pure:
// the caller says which diag dirs hold a manifest.
//   manifest: the job ran with --diag (its diag dir has manifest.json);
//   watch:    `jobmon watch <id>` asked for it;
//   config:   [monitor.select] matches (partition, user, name), log only.

#include <functional>
#include <optional>
#include <set>
#include <string>

#include "jobmon/monitor/monitor_config.h"
#include "jobmon/slurm/jobs.h"

namespace jobmon::monitor {

// The plugin's diag_dir pattern for this job, read as the plugin reads it
// (slurm_pattern::ExpandDiagDir); "" when the pattern cannot name one.
std::string DiagDirFor(const slurm::SlurmJob& job, const std::string& pattern);

bool MatchesSelection(const slurm::SlurmJob& job, const JobSelection& selection);

struct Discovered {
  std::string source;  // manifest | watch | config
  std::string log_path, diag_dir;
};

std::optional<Discovered> Discover(const slurm::SlurmJob& job, const MonitorConfig& config,
                                   const std::set<uint32_t>& watched,
                                   const std::function<bool(const std::string&)>& has_manifest);

}  // namespace jobmon::monitor
