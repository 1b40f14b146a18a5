#include "support.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <ctime>
#include <numeric>
#include <set>

#include "jobmon/common/metric_names.h"
#include "jobmon/diagnose/query_helpers.h"

namespace jobmon::diagnose::playbook {

std::vector<std::string> JobHosts(const DiagnoseContext& context) {
  std::set<std::string> hosts(context.hosts.begin(), context.hosts.end());
  hosts.insert(context.expected_hosts.begin(), context.expected_hosts.end());
  return {hosts.begin(), hosts.end()};
}

std::map<std::string, std::vector<const Series*>> ByHost(const std::vector<Series>& series) {
  std::map<std::string, std::vector<const Series*>> out;
  for (const auto& s : series) out[s.Label("host")].push_back(&s);
  return out;
}

std::vector<double> Values(const std::vector<const Series*>& series,
                           const std::optional<TimeRange>& range) {
  std::vector<double> out;
  for (const Series* s : series) {
    for (const auto& sample : s->samples) {
      if (!range || range->Contains(sample.time)) out.push_back(sample.value);
    }
  }
  return out;
}

double Mean(const std::vector<double>& values) {
  if (values.empty()) return 0;
  return std::accumulate(values.begin(), values.end(), 0.0) / static_cast<double>(values.size());
}

Finding MakeFinding(std::string code, Severity severity, std::string family, std::string host,
                    std::optional<double> value, std::string unit, std::optional<double> time,
                    std::string text) {
  Finding f;
  f.code = std::move(code);
  f.severity = severity;
  f.family = std::move(family);
  f.host = std::move(host);
  f.value = value;
  f.unit = std::move(unit);
  f.time = time;
  f.text = std::move(text);
  return f;
}

std::optional<Spike> RateSpike(const Series& rate, const TimeRange& around,
                               const DiagnoseContext& context, double factor, double floor,
                               bool skip_checkpoints) {
  std::vector<double> before;
  for (const auto& sample : rate.samples) {
    if (sample.time < around.start && !context.InCheckpoint(sample.time)) {
      before.push_back(sample.value);
    }
  }
  Spike spike;
  spike.baseline = Mean(before);
  const double threshold = factor * std::max(floor, spike.baseline);
  bool found = false;
  for (const auto& sample : rate.samples) {
    if (!around.Contains(sample.time)) continue;
    if (skip_checkpoints && context.InCheckpoint(sample.time)) continue;
    if (sample.value <= threshold) continue;
    if (!found) spike.time = sample.time;               // first: when it started
    spike.value = std::max(spike.value, sample.value);  // peak: how bad
    found = true;
  }
  if (!found) return std::nullopt;
  return spike;
}

std::optional<Finding> PortDown(const Series& port_state) {
  auto stats = StatsOf(port_state);
  if (!stats || stats->min >= 1) return std::nullopt;
  const double down = FirstTimeBelow(port_state, 1).value_or(stats->first_time);
  const std::string device = port_state.Label("device") + "/" + port_state.Label("port");
  Finding f =
      MakeFinding("rdma-port-down", Severity::kCritical, metric_names::kRdmaPortState,
                  port_state.Label("host"), stats->min, "state", down,
                  fmt::format("{}: RDMA port {} down at {}{}", port_state.Label("host"), device,
                              FormatTime(down), stats->last >= 1 ? " (came back)" : ""));
  f.device = device;
  return f;
}

std::string FormatTime(double unix_seconds) {
  std::time_t t = static_cast<std::time_t>(std::floor(unix_seconds));
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buffer[32];
  std::strftime(buffer, sizeof buffer, "%Y-%m-%d %H:%M:%S UTC", &tm);
  return buffer;
}

std::string FormatBytes(double bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int unit = 0;
  double value = std::abs(bytes);
  while (value >= 1024 && unit < 4) {
    value /= 1024;
    ++unit;
  }
  return fmt::format("{}{:.1f} {}", bytes < 0 ? "-" : "", value, units[unit]);
}

std::string Join(const std::vector<std::string>& items, std::string_view separator) {
  std::string out;
  for (const auto& item : items) {
    if (!out.empty()) out += separator;
    out += item;
  }
  return out;
}

}  // namespace jobmon::diagnose::playbook
