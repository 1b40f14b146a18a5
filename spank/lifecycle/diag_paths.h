#pragma once
// Where a job's diagnostics live: the diag dir on the shared filesystem (its
// path from the plugin's pattern; the layout inside is common/diag_dir.h)
// and the node-local run dir (pids, ports).

#include <map>
#include <string>

#include "jobmon/common/diag_dir.h"  // DiagLayout: the layout inside the dir
#include "jobmon/common/expected.h"
#include "lifecycle/job_env.h"
#include "lifecycle/plugin_config.h"

namespace jobmon::lifecycle {

// Replaces %<letter> by vars[letter]; "%%" is a literal %. An unknown
// letter is an error (a typo in plugstack.conf should say so).
Expected<std::string> ExpandPattern(const std::string& pattern,
                                    const std::map<char, std::string>& vars);

// The directory of the job's stdout file with Slurm's filename patterns
// (%j %u %x %N %A %%) expanded; the work dir when there is no stdout file
// or its directory still holds a step-level pattern.
std::string StdoutDirectory(const JobEnv& job);
// The job's stdout file, patterns expanded (empty when it depends on the
// task or node); relative paths are in the work dir.
std::string StdoutPath(const JobEnv& job);

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
