#pragma once
// Where a job's diagnostics live: the diag dir on the shared filesystem (its
// path from the plugin's pattern; the layout inside is common/diag_dir.h)
// and the node-local run dir (pids, ports).

#include <map>
#include <string>

#include "jobmon/common/diag_dir.h"  // DiagLayout: the layout inside the dir
#include "jobmon/common/expected.h"
#include "jobmon/common/slurm_pattern.h"
#include "lifecycle/job_env.h"
#include "lifecycle/plugin_config.h"

namespace jobmon::lifecycle {

// The job's values for Slurm's filename patterns (slurm_pattern.h).
slurm_pattern::JobFields PatternFields(const JobEnv& job);
// The job's stdout file as Slurm names it (slurm_pattern::StdoutPath; in the
// work dir when relative, /tmp without one) and its directory.
std::string StdoutPath(const JobEnv& job);
std::string StdoutDirectory(const JobEnv& job);

// The diag dir: the plugin's diag_dir pattern read by
// slurm_pattern::ExpandDiagDir (an unknown letter is an error), absolute.
Expected<DiagLayout> DiagLayoutFor(const PluginConfig& config, const JobEnv& job);

// /run/jobmon/<node>/<job id>: keyed by node name, since several dev-cluster
// nodes share one host.
struct RunDir {
  std::string dir;
  std::string node_dir;  // the parent: every job of this node
  std::string exporter_pid() const { return dir + "/exporter.pid"; }
  // Made by the prolog for the user the supervisor runs as (the job's or the
  // service user), who cannot write the root-owned run dir; 0700.
  std::string supervisor_dir() const { return dir + "/supervisor"; }
  std::string exporter_status() const { return supervisor_dir() + "/exporter.status"; }
  std::string prometheus_pid() const { return dir + "/prometheus.pid"; }
  std::string archiver_pid() const { return dir + "/archiver.pid"; }
  std::string ports() const { return dir + "/ports"; }
  std::string diag_dir() const { return dir + "/diag_dir"; }
  std::string degraded() const { return dir + "/degraded"; }
  // Where the prolog put the live TSDB: the epilog trusts this root-owned
  // record, not the user's manifest.
  std::string tsdb_dir() const { return dir + "/tsdb_dir"; }
};

RunDir RunDirFor(const PluginConfig& config, const std::string& node, uint32_t job_id);

// The extra patterns of exporter_arg and tfevents_dir: %d diag dir, %n node,
// %j job id.
Expected<std::string> ExpandNodePattern(const std::string& pattern, const DiagLayout& layout,
                                        const JobEnv& job);

}  // namespace jobmon::lifecycle
