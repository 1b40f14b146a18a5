#pragma once
// `jobmon check`'s checks, each returning its problems, never stopping at
// the first: jobmon.toml, the secrets file and the secrets receivers name,
// the plugin's plugstack.conf line (its own parser) and the paths it names,
// the state database's directory, and Slurm as the monitor asks it. Each
// problem is one line: "file:line: what", "file: what" or "what".

#include <sys/stat.h>
#include <sys/types.h>

#include <string>
#include <vector>

#include "jobmon/monitor/jobmon_config.h"
#include "lifecycle/plugin_config.h"
#include "slurm_upgrade.h"

namespace jobmon::cli {

// The user slurm_job_monitor runs as.
struct AccountIds {
  std::string name;
  uid_t uid = 0;
  std::vector<gid_t> gids;  // primary and supplementary
};
// nullopt when there is no such user.
std::optional<AccountIds> LookUpAccount(const std::string& name);

// Pure: whether `ids` may create files in (write to) what `st` describes,
// by its owner, group and mode (root always may).
bool WritableBy(const struct stat& st, const AccountIds& ids);

// Pure: why a program the plugin starts would fail to start, or "" when it
// looks fine ("" for a regular file with execute permission for others:
// the job's daemons run as the job's user).
std::string ProgramProblem(const struct stat& st);

// Secrets: the file's mode and owner (the daemon's rules, for `owner`) and
// every secret a receiver names (from the file or this environment).
std::vector<std::string> CheckSecrets(const alerts::AlertsConfig& alerts,
                                      const std::string& config_path, const AccountIds& owner);

// The directory of monitor.state_db (and the file when it exists) writable by `owner`.
std::vector<std::string> CheckStateDb(const std::string& state_db, const AccountIds& owner);

// The plugin's arguments from its plugstack.conf line(s) and the paths they
// name.
// `running`: the Slurm programs found here (slurm_upgrade.h); a plugin
// built for another series than theirs is a problem. Empty: not asked.
std::vector<std::string> CheckPlugstack(const std::string& plugstack_path,
                                        const std::vector<RunningSlurm>& running = {});

// The paths of one parsed plugin config; `where` is "file:line".
std::vector<std::string> CheckPluginPaths(const lifecycle::PluginConfig& config,
                                          const std::string& where);

// `squeue --json` and `sinfo --json` as the monitor runs them (its programs
// and timeout): what failed, if anything.
std::vector<std::string> CheckSlurm(const monitor::MonitorConfig& config);

}  // namespace jobmon::cli
