#pragma once
// The plugin's settings: `key=value` arguments on its plugstack.conf line
// (documented in etc/plugstack.conf.d/diag.conf and README). Parsing is pure;
// an unknown key or a bad value is an error that names it, and the caller
// disables the plugin for that job instead of failing anything.

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "jobmon/common/diag_dir.h"
#include "jobmon/common/expected.h"
#include "jobmon/common/ip_address.h"
#include "jobmon/common/ray_targets.h"

namespace jobmon::lifecycle {

struct PluginConfig {
  std::string exporter = JOBMON_DEFAULT_BINDIR "/jobmon-exporter";
  std::string supervisor = JOBMON_DEFAULT_BINDIR "/jobmon-supervise";
  std::string archiver = JOBMON_DEFAULT_BINDIR "/jobmon-archive";
  std::string prometheus = "/usr/bin/prometheus";
  // The exporter's `scontrol listpids` (the job's processes and tasks where
  // no cgroup names the job): Debian's slurm-client.
  std::string scontrol = "/usr/bin/scontrol";
  // %j job id, %u user, %x job name, %o the directory of the job's stdout
  // file (its working directory when it has none).
  std::string diag_dir{kDefaultDiagDirPattern};
  std::vector<Cidr> private_cidrs;  // empty: RFC1918
  // Who may connect to the exporters (the job's Prometheus on the head node,
  // the monitor, a central Prometheus): IPv4 blocks; empty: the cluster's
  // private_cidrs (RFC1918 when those are empty). ExporterAllowList.
  std::vector<Cidr> scrapers;
  int exporter_port = 9400;
  int prometheus_port = 9190;
  int port_tries = 100;  // ports tried upwards from each base
  std::chrono::milliseconds scrape_interval{5000};
  std::string service_user;  // exporters run as this user; empty: the job's user
  bool archive = true;
  int compression_level = 3;  // zstd
  bool keep_tsdb = false;     // keep prometheus/ next to a verified archive
  bool default_on = false;    // for jobs that pass no --diag
  // The live TSDB of the job's Prometheus, on the head node's local disk:
  // Prometheus does not support NFS-like filesystems. %n node, %j job id,
  // %u user, %d the diag dir (an operator without local disk may put it
  // back there). /var/lib: host-specific state, root-owned and not
  // world-writable (no user can occupy the path first, unlike /var/tmp),
  // on disk rather than tmpfs (/run), and not aged by systemd-tmpfiles.
  std::string tsdb_dir = "/var/lib/jobmon/tsdb/%n/%j";
  int tsdb_min_free_mb = 1024;  // below this free on its filesystem: no Prometheus
  std::string remote_write;     // central store URL, also written by every job
  // Its external label `cluster`; empty: Slurm's ClusterName (SLURM_CLUSTER_NAME).
  std::string cluster;
  // A Prometheus rules file the job's Prometheus evaluates (rule_files:),
  // e.g. the package's /usr/share/jobmon/jobmon-rules.yml; empty: none.
  std::string rule_file;
  // Credentials for remote_write, referenced from prometheus.yml (never
  // copied); checked by remote_write.h.
  std::string remote_write_bearer_file;          // authorization: credentials_file
  std::string remote_write_user;                 // basic_auth: username
  std::string remote_write_password_file;        // basic_auth: password_file
  std::string remote_write_ca_file;              // tls_config: ca_file
  std::chrono::milliseconds epilog_wait{30000};  // archiving the epilog waits for
  std::string run_dir = "/run/jobmon";           // pids and ports, per node and job
  int exporter_restarts = 5;
  // Where each node's exporter looks for TensorBoard event files (%d the
  // diag dir, %n the node); the job writes there through $JOBMON_DIAG_DIR.
  std::string tfevents_dir = "%d/tensorboard/%n";
  std::vector<std::string> exporter_args;  // extra exporter flags (%d, %n, %j expand)
  // Ray's service-discovery file on the head node (common/ray_targets.h):
  // the head's exporter serves its targets to the job's Prometheus (%j,
  // %n, %d expand: a job that starts Ray with --temp-dir=/tmp/ray-$SLURM_JOB_ID
  // on a shared node). "": Ray's metrics are not scraped.
  std::string ray_discovery = std::string(ray_targets::kDefaultDiscoveryFile);
};

Expected<PluginConfig> ParsePluginConfig(const std::vector<std::string>& args);

// The keys, for error messages and docs.
std::vector<std::string> PluginConfigKeys();

// The exporter's --allow arguments: `scrapers`, else the cluster's blocks;
// IPv4 only (MetricsServerLimits::allowed), so none for an exporter on an IPv6 address,
// which then takes any scraper that reaches it.
std::vector<std::string> ExporterAllowArgs(const PluginConfig& config, const IpAddress& listen);

}  // namespace jobmon::lifecycle
