#include "lifecycle/prometheus_config.h"

#include <algorithm>
#include <chrono>
#include <nlohmann/json.hpp>

#include "jobmon/common/store_labels.h"

namespace jobmon::lifecycle {
namespace {

// YAML accepts JSON strings as double-quoted scalars.
std::string Quoted(const std::string& text) { return nlohmann::json(text).dump(); }

std::string Seconds(std::chrono::milliseconds d) {
  if (d.count() % 1000 == 0) return std::to_string(d.count() / 1000) + "s";
  return std::to_string(d.count()) + "ms";
}

}  // namespace

std::string RenderPrometheusConfig(const PluginConfig& config, const JobEnv& job,
                                   const DiagLayout& layout, const std::string& ray_sd) {
  // A scrape that outlives the interval would overlap the next one.
  auto timeout = std::min(config.scrape_interval, std::chrono::milliseconds(10000));
  std::string out;
  out += "# Written by jobmon's spank_diag for job " + std::to_string(job.job_id) +
         "; the exporters' targets appear in targets/ as their nodes start.\n";
  out += "global:\n";
  out += "  scrape_interval: " + Seconds(config.scrape_interval) + "\n";
  out += "  scrape_timeout: " + Seconds(timeout) + "\n";
  out += "  evaluation_interval: " + Seconds(config.scrape_interval) + "\n";
  out += "  external_labels:\n";
  out +=
      std::string("    ") + store_labels::kJobId + ": " + Quoted(std::to_string(job.job_id)) + "\n";
  // Job ids collide across clusters (and restart after a state reset): a
  // central store tells jobs apart by cluster and user too.
  const std::string& cluster = config.cluster.empty() ? job.cluster : config.cluster;
  if (!cluster.empty())
    out += std::string("    ") + store_labels::kCluster + ": " + Quoted(cluster) + "\n";
  out += std::string("    ") + store_labels::kUser + ": " + Quoted(job.user) + "\n";
  if (!config.rule_file.empty()) {
    out += "rule_files:\n";
    out += "  - " + Quoted(config.rule_file) + "\n";
  }
  out += "scrape_configs:\n";
  out += "  - job_name: jobmon-exporter\n";
  // The exporter labels its series with host itself; keep that label.
  out += "    honor_labels: true\n";
  out += "    file_sd_configs:\n";
  out += "      - files: [" + Quoted(layout.targets_dir() + "/*.json") + "]\n";
  out += "        refresh_interval: " + Seconds(config.scrape_interval) + "\n";
  if (!ray_sd.empty()) {
    // Ray's own metrics, wherever the job starts Ray: the head's exporter
    // answers its discovery file's targets, labelled host and
    // jobmon_source=ray (ray_targets.h); nothing while the job runs no Ray.
    out += "  - job_name: ray\n";
    out += "    http_sd_configs:\n";
    out += "      - url: " + Quoted(ray_sd) + "\n";
    out += "        refresh_interval: " +
           Seconds(std::max(config.scrape_interval, std::chrono::milliseconds(5000))) + "\n";
  }
  if (!config.remote_write.empty()) {
    out += "remote_write:\n";
    out += "  - url: " + Quoted(config.remote_write) + "\n";
    // Files, not secrets: Prometheus reads them itself (remote_write.h).
    if (!config.remote_write_bearer_file.empty()) {
      out += "    authorization:\n";
      out += "      type: Bearer\n";
      out += "      credentials_file: " + Quoted(config.remote_write_bearer_file) + "\n";
    }
    if (!config.remote_write_user.empty()) {
      out += "    basic_auth:\n";
      out += "      username: " + Quoted(config.remote_write_user) + "\n";
      out += "      password_file: " + Quoted(config.remote_write_password_file) + "\n";
    }
    if (!config.remote_write_ca_file.empty()) {
      out += "    tls_config:\n";
      out += "      ca_file: " + Quoted(config.remote_write_ca_file) + "\n";
    }
  }
  return out;
}

}  // namespace jobmon::lifecycle
