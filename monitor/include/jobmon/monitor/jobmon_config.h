#pragma once
// jobmon.toml as a whole: the one loader behind slurm_job_monitor and every
// jobmon command. Which file: config_path.h (--config, $JOBMON_CONFIG,
// /etc/jobmon/jobmon.toml). Every section is checked whoever reads it, so a
// typo anywhere is reported by the first command that loads the file, with
// "file:line: unknown key 'x' in [section]".

#include <optional>
#include <string>
#include <string_view>

#include "jobmon/alerts/alerts_config.h"
#include "jobmon/common/config_path.h"
#include "jobmon/common/expected.h"
#include "jobmon/monitor/monitor_config.h"

namespace jobmon::monitor {

// [triage]: defaults for `jobmon triage`; its flags win.
struct TriageConfig {
  std::string profile;     // empty: detected
  std::string step_regex;  // empty: none
  std::optional<double> stall_min_seconds;
};

// [diagnose]: the cluster's central store (VictoriaMetrics or Prometheus fed
// by the plugin's remote_write), for `jobmon diagnose` of a job whose
// archive is gone; `--store`, `--cluster` and `--store-token-file` win.
struct DiagnoseConfig {
  std::string store_url;         // empty: no fallback
  std::string cluster;           // the `cluster` label (a store of several clusters)
  std::string store_token_file;  // a bearer token, in a 0600 file
  double store_lookback_seconds = 31 * 86400.0;
};

struct JobmonConfig {
  std::string path;  // the file read; empty: none (the default file is absent)
  MonitorConfig monitor;
  alerts::AlertsConfig alerts;
  TriageConfig triage;
  DiagnoseConfig diagnose;
};

// `path` only names the file in messages.
Expected<JobmonConfig> ParseJobmonConfig(std::string_view toml_text, const std::string& path);
// Reads the file `where` names: a required one must exist; an absent
// default is every built-in default.
Expected<JobmonConfig> LoadJobmonConfig(const ConfigPath& where);
// The path rule applied to a --config value (empty: not given).
inline Expected<JobmonConfig> LoadJobmonConfig(std::string_view config_flag) {
  return LoadJobmonConfig(ResolveConfigPath(config_flag));
}

}  // namespace jobmon::monitor
