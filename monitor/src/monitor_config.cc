#include "jobmon/monitor/monitor_config.h"

#include <re2/re2.h>
#include <toml++/toml.h>

#include <fstream>
#include <set>
#include <sstream>

#include "jobmon/common/duration.h"

namespace jobmon::monitor {
namespace {

class Reader {
 public:
  Reader(const toml::table& table, std::string prefix)
      : table_(table), prefix_(std::move(prefix)) {}

  void String(const char* key, std::string& out) {
    known_.insert(key);
    if (auto node = table_.get(key)) {
      if (auto v = node->value<std::string>()) {
        out = *v;
      } else {
        Fail(key, "must be a string");
      }
    }
  }
  // A duration: "30s", "5m", or a number of seconds.
  void Seconds(const char* key, double& out, double minimum) {
    known_.insert(key);
    auto node = table_.get(key);
    if (!node) return;
    double value = 0;
    if (auto text = node->value<std::string>()) {
      auto parsed = ParseDurationSeconds(*text);
      if (!parsed) return Fail(key, parsed.error().message);
      value = *parsed;
    } else if (auto number = node->value<double>()) {
      value = *number;
    } else {
      return Fail(key, "must be a duration (\"30s\") or a number of seconds");
    }
    if (value < minimum) return Fail(key, "must be at least " + std::to_string(minimum) + "s");
    out = value;
  }
  void Number(const char* key, double& out, double minimum) {
    known_.insert(key);
    auto node = table_.get(key);
    if (!node) return;
    auto number = node->value<double>();
    if (!number) return Fail(key, "must be a number");
    if (*number < minimum) return Fail(key, "must be at least " + std::to_string(minimum));
    out = *number;
  }
  void Integer(const char* key, int& out, int minimum, int maximum) {
    known_.insert(key);
    auto node = table_.get(key);
    if (!node) return;
    auto number = node->value<int64_t>();
    if (!number || *number < minimum || *number > maximum) {
      return Fail(
          key, "must be an integer in " + std::to_string(minimum) + ".." + std::to_string(maximum));
    }
    out = static_cast<int>(*number);
  }
  void Strings(const char* key, std::vector<std::string>& out) {
    known_.insert(key);
    auto node = table_.get(key);
    if (!node) return;
    auto* array = node->as_array();
    if (!array) return Fail(key, "must be an array of strings");
    out.clear();
    for (const auto& item : *array) {
      auto v = item.value<std::string>();
      if (!v) return Fail(key, "must be an array of strings");
      out.push_back(*v);
    }
  }
  // A subtable ([monitor.stall]); nullptr when absent.
  const toml::table* Table(const char* key) {
    known_.insert(key);
    auto node = table_.get(key);
    if (!node) return nullptr;
    if (!node->is_table()) Fail(key, "must be a table");
    return node->as_table();
  }
  // After every key was read: a key nobody read is a typo (or a key of
  // another version), which would otherwise leave a default in force
  // without a word.
  void RejectUnknown() {
    for (const auto& [key, node] : table_) {
      if (!known_.contains(key.str())) Fail(key.str(), "is not a known key");
    }
  }
  void Fail(std::string_view key, const std::string& why) {
    if (!error_) error_ = prefix_ + std::string(key) + " " + why;
  }
  const std::optional<std::string>& error() const { return error_; }

 private:
  const toml::table& table_;
  std::string prefix_;
  std::set<std::string, std::less<>> known_;
  std::optional<std::string> error_;
};

}  // namespace

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

Expected<MonitorConfig> ParseMonitorConfig(std::string_view text, const std::string& path) {
  toml::table root;
  try {
    root = toml::parse(text, path);
  } catch (const toml::parse_error& e) {
    return Error{path + ": " + std::string(e.description()) + " (line " +
                 std::to_string(e.source().begin.line) + ")"};
  }
  MonitorConfig config;
  if (root.contains("monitor") && !root["monitor"].is_table())
    return Error{path + ": monitor must be a table ([monitor])"};
  const toml::table* section = root["monitor"].as_table();
  if (!section) return config;  // every default

  Reader r(*section, path + ": monitor.");
  r.String("cluster", config.cluster);
  r.String("state_db", config.state_db);
  r.Seconds("poll_interval", config.poll_interval, 0.1);
  r.Seconds("slurm_poll_interval", config.slurm_poll_interval, 0.1);
  r.Seconds("slurm_timeout", config.slurm_timeout, 0.1);
  r.Integer("slurm_retries", config.slurm_retries, 1, 10);
  r.String("squeue", config.squeue);
  r.String("sinfo", config.sinfo);
  r.String("diag_dir", config.diag_dir_pattern);
  r.Seconds("scrape_timeout", config.scrape_timeout, 0.1);
  r.Seconds("window", config.window_seconds, 60);
  r.Seconds("stale_after", config.stale_after, 1);
  r.Seconds("ended_retention", config.ended_retention, 0);
  r.Seconds("heartbeat_timeout", config.heartbeat_timeout, 1);
  r.Number("slowdown_factor", config.slowdown_factor, 1.01);
  r.String("metrics_listen", config.metrics_listen);
  r.String("notify_file", config.notify_file);
  r.String("log_format", config.log_format);
  if (const toml::table* stall = r.Table("stall")) {
    Reader s(*stall, path + ": monitor.stall.");
    s.Number("k", config.stall.k, 1);
    s.Seconds("min_stall", config.stall.min_stall_seconds, 1);
    s.Seconds("startup_grace", config.stall.startup_grace_seconds, 1);
    s.Number("checkpoint_grace_factor", config.stall.checkpoint_grace_factor, 1);
    s.Seconds("first_checkpoint_grace", config.stall.first_checkpoint_grace_seconds, 0);
    s.RejectUnknown();
    if (s.error()) return Error{*s.error()};
  }
  if (const toml::table* select = r.Table("select")) {
    Reader s(*select, path + ": monitor.select.");
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
  if (!config.metrics_listen.empty()) {
    if (auto listen = ParseMetricsListen(config.metrics_listen); !listen)
      return Error{path + ": monitor.metrics_listen: " + listen.error().message};
  }
  return config;
}

Expected<MonitorConfig> LoadMonitorConfig(const std::string& path) {
  std::ifstream in(path);
  if (!in) return Error{path + ": cannot read"};
  std::stringstream text;
  text << in.rdbuf();
  return ParseMonitorConfig(text.str(), path);
}

}  // namespace jobmon::monitor
