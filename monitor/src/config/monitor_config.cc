#include "jobmon/monitor/monitor_config.h"

#include <re2/re2.h>

#include "jobmon/common/http_url.h"
#include "jobmon/common/slurm_pattern.h"
#include "jobmon/common/toml_config.h"

namespace jobmon::monitor {

const re2::RE2& JobSelection::NameRegex() const {
  if (!compiled_ || compiled_for_ != name_regex) {
    compiled_ = std::make_shared<const RE2>(name_regex, RE2::Quiet);
    compiled_for_ = name_regex;
  }
  return *compiled_;
}

Expected<SocketAddress> ParseMetricsListen(std::string_view text) {
  auto parsed = ParseSocketAddress(text);
  if (!parsed) return parsed.error();
  if (!parsed->address.IsLoopback()) {
    return Error{"'" + std::string(text) +
                 "' must be a loopback address:port: the daemon's metrics are not for the "
                 "network"};
  }
  return parsed;
}

Expected<void> CheckStoreUrl(std::string_view url) {
  if (!IsHttpUrl(url)) {
    return Error{"'" + std::string(url) + "' must be an http:// or https:// URL"};
  }
  const std::string_view rest = url.substr(url.find("//") + 2);
  if (UrlHasCredentials(url)) {
    return Error{
        "credentials do not belong in the URL; name secrets "
        "(store_bearer_token_secret, store_basic_password_secret)"};
  }
  if (rest.empty() || rest.front() == '/') return Error{"the URL names no host"};
  return {};
}

namespace {

// The stall rule's table (`[stall]`, or its old name `[monitor.stall]`).
Expected<void> ReadStallRule(const toml::table& table, const std::string& path,
                             const std::string& section, triage::StallRule& rule) {
  TomlSection s(table, path, section);
  s.Number("k", rule.k, 1);
  s.Seconds("min_stall", rule.min_stall_seconds, 1);
  s.Seconds("startup_grace", rule.startup_grace_seconds, 1);
  s.Number("checkpoint_grace_factor", rule.checkpoint_grace_factor, 1);
  s.Seconds("first_checkpoint_grace", rule.first_checkpoint_grace_seconds, 0);
  s.Number("phase_grace_factor", rule.phase_grace_factor, 1);
  s.Seconds("first_phase_grace", rule.first_phase_grace_seconds, 1);
  s.RejectUnknown();
  if (s.error()) return Error{*s.error()};
  return {};
}

// [recovery]: what the admins allow the monitor to do about a hang.
Expected<void> ReadRecoveryPolicy(const toml::table& table, const std::string& path,
                                  RecoveryPolicy& policy) {
  TomlSection s(table, path, "recovery");
  std::vector<std::string> allowed;
  s.Strings("allowed", allowed);
  s.Strings("classes", policy.classes);
  s.Seconds("grace", policy.grace_seconds, 0);
  s.String("signal", policy.signal);
  s.Seconds("checkpoint_wait", policy.checkpoint_wait_seconds, 0);
  s.Integer("max_requeues", policy.max_requeues, 0, 100);
  s.Bool("drain", policy.drain);
  s.Bool("dry_run", policy.dry_run);
  s.RejectUnknown();
  if (s.error()) return Error{*s.error()};
  for (const std::string& word : allowed) {
    auto choice = ParseOnHang(word);
    if (!choice || *choice == OnHang::kNotify)
      return Error{path + ": recovery.allowed: '" + word + "': expected signal, requeue or cancel"};
    policy.allowed.push_back(*choice);
  }
  // A name scancel --signal takes (USR1, SIGUSR1, TERM, ...), nothing a shell would read.
  const std::string& sig = policy.signal;
  if (sig.empty() || sig.size() > 12 ||
      sig.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789") != std::string::npos)
    return Error{path + ": recovery.signal: expected a signal name such as USR1"};
  if (policy.signal.starts_with("SIG")) policy.signal = policy.signal.substr(3);
  return {};
}

}  // namespace

Expected<MonitorConfig> ParseMonitorConfig(std::string_view text, const std::string& path) {
  auto parsed = ParseTomlConfig(text, path);
  if (!parsed) return parsed.error();
  const toml::table& root = *parsed;
  MonitorConfig config;
  if (root.contains("monitor") && !root["monitor"].is_table())
    return Error{path + ": monitor must be a table ([monitor])"};
  if (root.contains("stall") && !root["stall"].is_table())
    return Error{path + ": stall must be a table ([stall])"};
  if (const toml::table* stall = root["stall"].as_table()) {
    if (auto read = ReadStallRule(*stall, path, "stall", config.stall); !read) return read.error();
  }
  if (root.contains("recovery") && !root["recovery"].is_table())
    return Error{path + ": recovery must be a table ([recovery])"};
  if (const toml::table* recovery = root["recovery"].as_table()) {
    if (auto read = ReadRecoveryPolicy(*recovery, path, config.recovery); !read)
      return read.error();
  }
  const toml::table* section = root["monitor"].as_table();
  if (!section) return config;  // every default

  TomlSection r(*section, path, "monitor");
  r.String("cluster", config.cluster);
  r.String("state_db", config.state_db);
  r.Seconds("poll_interval", config.poll_interval, 0.1);
  r.Seconds("slurm_poll_interval", config.slurm_poll_interval, 0.1);
  r.Seconds("slurm_timeout", config.slurm_timeout, 0.1);
  r.Integer("slurm_retries", config.slurm_retries, 1, 10);
  r.Seconds("slurm_vanish_confirm", config.slurm_vanish_confirm, 0);
  r.Seconds("slurm_outage_alert", config.slurm_outage_alert, 1);
  r.String("squeue", config.squeue);
  r.String("scontrol", config.scontrol);
  r.String("sinfo", config.sinfo);
  r.String("scancel", config.scancel);
  r.String("diag_dir", config.diag_dir_pattern);
  r.Seconds("scrape_timeout", config.scrape_timeout, 0.1);
  r.Integer("scrape_concurrency", config.scrape_concurrency, 1, 100000);
  r.Seconds("healthy_scrape_interval", config.healthy_scrape_interval, 0);
  r.Seconds("window", config.window_seconds, 60);
  r.String("evidence", config.evidence);
  r.String("store_url", config.store_url);
  if (section->contains("store_cluster")) {
    std::string cluster;
    r.String("store_cluster", cluster);
    config.store_cluster = cluster;
  }
  r.Seconds("store_timeout", config.store_timeout, 0.1);
  r.String("store_bearer_token_secret", config.store_bearer_token_secret);
  r.String("store_basic_user", config.store_basic_user);
  r.String("store_basic_password_secret", config.store_basic_password_secret);
  r.Seconds("stale_after", config.stale_after, 1);
  r.Seconds("ended_retention", config.ended_retention, 0);
  r.Seconds("heartbeat_timeout", config.heartbeat_timeout, 1);
  r.Bool("diagnose_at_end", config.diagnose_at_end);
  r.Seconds("diagnose_timeout", config.diagnose_timeout, 1);
  r.String("jobmon_binary", config.jobmon_binary);
  r.String("gnuplot", config.gnuplot);
  r.Number("slowdown_factor", config.slowdown.factor, 1.01);
  r.String("metrics_listen", config.metrics_listen);
  r.String("notify_file", config.notify_file);
  r.String("log_format", config.log_format);
  r.String("api_socket", config.api_socket);
  r.String("admin_group", config.admin_group);
  // [monitor.stall] is what [stall] was called before the monitor and
  // `jobmon triage` shared it; both at once would be two rules.
  if (const toml::table* stall = r.Table("stall")) {
    if (root.contains("stall"))
      return Error{path + ": [monitor.stall] and [stall] both set the stall rule: keep [stall]"};
    if (auto read = ReadStallRule(*stall, path, "monitor.stall", config.stall); !read)
      return read.error();
  }
  r.Seconds("slowdown_window", config.slowdown.window_seconds, 1);
  r.Integer("slowdown_min_steps", config.slowdown.min_steps, 3, 100000);
  if (const toml::table* select = r.Table("select")) {
    TomlSection s(*select, path, "monitor.select");
    s.Strings("partitions", config.select.partitions);
    s.Strings("users", config.select.users);
    s.String("name_regex", config.select.name_regex);
    s.RejectUnknown();
    if (s.error()) return Error{*s.error()};
    if (!config.select.name_regex.empty()) {
      const RE2& re = config.select.NameRegex();
      if (!re.ok()) return Error{path + ": monitor.select.name_regex: " + re.error()};
    }
  }
  std::vector<std::string> cidrs;
  r.Strings("cluster_cidrs", cidrs);
  for (const std::string& cidr_text : cidrs) {
    auto cidr = Cidr::Parse(cidr_text);
    if (!cidr) return Error{path + ": monitor.cluster_cidrs: " + cidr.error().message};
    config.cluster_cidrs.push_back(*cidr);
  }
  r.RejectUnknown();  // last: after every key of [monitor] was read
  if (r.error()) return Error{*r.error()};
  if (config.log_format != "text" && config.log_format != "json") {
    return Error{path + ": monitor.log_format must be \"text\" or \"json\""};
  }
  if (config.evidence != "scrape" && config.evidence != "store") {
    return Error{path + ": monitor.evidence must be \"scrape\" or \"store\""};
  }
  if (auto pattern = slurm_pattern::CheckDiagDirPattern(config.diag_dir_pattern); !pattern) {
    return Error{path + ": monitor.diag_dir: " + pattern.error().message};
  }
  if (auto url = CheckStoreUrl(config.store_url); !url) {
    return Error{path + ": monitor.store_url: " + url.error().message};
  }
  if (!config.store_basic_user.empty() && config.store_basic_password_secret.empty()) {
    return Error{path + ": monitor.store_basic_user needs monitor.store_basic_password_secret"};
  }
  if (!config.api_socket.empty() && config.api_socket.front() != '/') {
    return Error{path + ": monitor.api_socket must be an absolute path (or \"\" for none)"};
  }
  if (!config.metrics_listen.empty()) {
    if (auto listen = ParseMetricsListen(config.metrics_listen); !listen)
      return Error{path + ": monitor.metrics_listen: " + listen.error().message};
  }
  return config;
}

Expected<MonitorConfig> LoadMonitorConfig(const std::string& path) {
  auto text = ReadConfigFile(path);
  if (!text) return text.error();
  return ParseMonitorConfig(*text, path);
}

}  // namespace jobmon::monitor
