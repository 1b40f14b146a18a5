#pragma once
// The [monitor] section of jobmon.toml (etc/jobmon.toml documents every key
// and its default). Parsing is pure: text in, config or an error naming the
// key out, so a bad reload keeps the running config.

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "jobmon/common/diag_dir.h"
#include "jobmon/common/expected.h"
#include "jobmon/common/ip_address.h"
#include "jobmon/common/socket_address.h"
#include "jobmon/monitor/progress_tracker.h"
#include "jobmon/monitor/recovery.h"
#include "jobmon/slurm/client.h"

namespace re2 {
class RE2;
}

namespace jobmon::monitor {

struct JobSelection {  // jobs followed from their log alone (no --diag)
  std::vector<std::string> partitions, users;
  std::string name_regex;  // RE2, whole name; empty: any
  bool Empty() const { return partitions.empty() && users.empty() && name_regex.empty(); }
  // name_regex compiled once per pattern: discovery matches every job it
  // does not follow at every Slurm poll.
  const re2::RE2& NameRegex() const;

 private:
  mutable std::shared_ptr<const re2::RE2> compiled_;
  mutable std::string compiled_for_;
};

struct MonitorConfig {
  std::string cluster = "cluster";
  std::string state_db = "/var/lib/jobmon/state.db";
  double poll_interval = 10;        // logs, exporters, stall checks
  double slurm_poll_interval = 30;  // the job list
  double slurm_timeout = 10;        // one squeue call
  int slurm_retries = 3;            // attempts per Slurm poll before a warning
  // An answer lacking every followed job, none seen ending, is believed
  // only after this long (slurm_outage.h); an outage this long is alerted.
  double slurm_vanish_confirm = 120;
  double slurm_outage_alert = 300;
  // Slurm's commands (slurm/client.h): the job list, the nodes' NodeAddr
  // (to check exporter targets), and sinfo for that on 22.05.
  std::string squeue = "squeue";
  std::string scontrol = "scontrol";
  std::string sinfo = "sinfo";
  std::string scancel = "scancel";  // recovery's signal and cancel
  slurm::Commands SlurmCommands() const {
    return {squeue, scontrol, sinfo, slurm_timeout, scancel};
  }
  std::string diag_dir_pattern{kDefaultDiagDirPattern};  // as the plugin's diag_dir
  JobSelection select;
  double scrape_timeout = 2;
  // Scrapes in flight at once (a socket each); the rest wait for a free
  // slot, so a cycle with dead hosts can take ceil(targets / this) x
  // scrape_timeout. The daemon lowers it to fit its open-file limit.
  int scrape_concurrency = 1000;
  // Scrape mode: a job training on pace is scraped this often, not every
  // cycle (scrape_cadence.h says when it is); 0: every job every cycle.
  double healthy_scrape_interval = 60;
  // Where a job's exporters may be: a target outside these is never fetched.
  // Empty: RFC1918; container bridges (DefaultExcludedCidrs) are always out.
  std::vector<Cidr> cluster_cidrs;
  // Where a --diag job's evidence comes from: "scrape" (its exporters,
  // fetched by this daemon) or "store" (a central store the jobs'
  // Prometheus remote-write to, asked with PromQL; no connection to the
  // nodes, and the window is back-filled from it after a restart).
  std::string evidence = "scrape";
  std::string store_url = "http://127.0.0.1:8428";
  // The `cluster` label the plugin puts on the jobs' series (its cluster=
  // option, else Slurm's ClusterName); unset: `cluster`; "": any.
  std::optional<std::string> store_cluster;
  double store_timeout = 10;
  // Names of secrets ([alerts] secrets_file or JOBMON_SECRET_<NAME>), and
  // the values the daemon resolved from them (never from this file).
  std::string store_bearer_token_secret, store_basic_user, store_basic_password_secret;
  std::string store_bearer_token, store_basic_password;
  bool StoreMode() const { return evidence == "store"; }
  std::string StoreCluster() const { return store_cluster.value_or(cluster); }
  double window_seconds = 3600;
  double stale_after = 30;        // an exporter not scraped successfully this long is gone
  double ended_retention = 3600;  // ended jobs stay tracked (for `jobmon status`) this long
  // At job end, when the TSDB archive exists: `jobmon diagnose`'s auto
  // playbooks, off the cycle thread, attached to the incident's alert as a
  // follow-up; abandoned (its Prometheus stopped) after diagnose_timeout.
  bool diagnose_at_end = true;
  double diagnose_timeout = 60;
  // The diagnosis runs as this program, as the job's user (child_diagnoser.h).
  std::string jobmon_binary = "/usr/bin/jobmon";
  // Draws each firing incident's chart (chart/gnuplot_chart.h), carried by
  // its alert and kept for `jobmon status --html`; empty: no charts.
  std::string gnuplot = "gnuplot";
  triage::StallRule stall;         // [stall]: the one rule, also `jobmon triage`'s and `status`'s
  SlowdownRule slowdown;           // slowdown_factor, slowdown_window, slowdown_min_steps
  double heartbeat_timeout = 100;  // when the log does not state it
  std::string metrics_listen = "127.0.0.1:9188";  // empty: no /metrics
  std::string notify_file = "-";                  // JSON lines; "-": stdout
  std::string log_format = "text";                // text | json
  // The read-only API for `jobmon status|list|watch` (Unix socket; empty:
  // none). Users see their own jobs; root and admin_group's members all.
  std::string api_socket = "/run/jobmon/monitor.sock";
  std::string admin_group;  // empty: only root sees every job
  RecoveryPolicy recovery;  // [recovery]: what may be done about a hang (recovery.h)
};

// metrics_listen: exactly one loopback IP and port ("127.0.0.1:9188",
// "[::1]:9188"); the daemon's metrics are not for the network.
Expected<SocketAddress> ParseMetricsListen(std::string_view text);

// store_url: http(s), a host, no user:password@ (credentials are secrets).
Expected<void> CheckStoreUrl(std::string_view url);

// `path_for_errors` only names the file in messages.
Expected<MonitorConfig> ParseMonitorConfig(std::string_view toml_text,
                                           const std::string& path_for_errors = "jobmon.toml");
Expected<MonitorConfig> LoadMonitorConfig(const std::string& path);

}  // namespace jobmon::monitor
