#include "playbooks/kit.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <ctime>
#include <numeric>
#include <set>

#include "jobmon/common/iso_time.h"
#include "jobmon/common/metric_names.h"
#include "jobmon/common/percentile.h"
#include "jobmon/common/store_labels.h"

namespace jobmon::diagnose {

namespace {

std::string WithSelector(std::string_view name, std::string_view selector) {
  if (selector.empty()) return std::string(name);
  return fmt::format("{}{{{}}}", name, selector);
}

long WholeSeconds(double seconds) { return std::max(1L, std::lround(std::ceil(seconds))); }

}  // namespace

std::string RateExpr(std::string_view counter, const DiagnoseContext& context,
                     std::string_view selector) {
  return fmt::format("rate({}[{}s])", WithSelector(counter, selector),
                     WholeSeconds(context.rate_window_seconds));
}

std::string IncreaseExpr(std::string_view counter, const TimeRange& range,
                         std::string_view selector) {
  return fmt::format("increase({}[{}s])", WithSelector(counter, selector),
                     WholeSeconds(range.seconds()));
}

std::string OverTimeExpr(std::string_view fn, std::string_view gauge, double seconds,
                         std::string_view selector) {
  return fmt::format("{}_over_time({}[{}s])", fn, WithSelector(gauge, selector),
                     WholeSeconds(seconds));
}

std::string HostSelector(const std::vector<std::string>& hosts) {
  if (hosts.empty()) return {};
  std::string alternatives;
  for (const auto& host : hosts) {
    if (!alternatives.empty()) alternatives += '|';
    alternatives += store_labels::RegexLiteral(host);  // dots match literally
  }
  return fmt::format("host=~\"{}\"", alternatives);
}

std::optional<Stats> StatsOf(const Series& series, const std::optional<TimeRange>& range) {
  Stats stats;
  double sum = 0;
  for (const auto& sample : series.samples) {
    if (range && !range->Contains(sample.time)) continue;
    if (std::isnan(sample.value)) continue;
    if (stats.count == 0) {
      stats.min = stats.max = sample.value;
      stats.first_time = sample.time;
    }
    stats.min = std::min(stats.min, sample.value);
    stats.max = std::max(stats.max, sample.value);
    stats.last = sample.value;
    stats.last_time = sample.time;
    sum += sample.value;
    ++stats.count;
  }
  if (stats.count == 0) return std::nullopt;
  stats.mean = sum / static_cast<double>(stats.count);
  return stats;
}

Series WithoutCheckpoints(const Series& series, const DiagnoseContext& context) {
  Series out{series.labels, {}};
  for (const auto& sample : series.samples) {
    if (!context.InCheckpoint(sample.time)) out.samples.push_back(sample);
  }
  return out;
}

std::optional<double> FirstTimeAbove(const Series& series, double threshold, bool inclusive) {
  for (const auto& sample : series.samples) {
    if (inclusive ? sample.value >= threshold : sample.value > threshold) return sample.time;
  }
  return std::nullopt;
}

std::optional<double> FirstTimeBelow(const Series& series, double threshold) {
  for (const auto& sample : series.samples) {
    if (sample.value < threshold) return sample.time;
  }
  return std::nullopt;
}

double StepFor(const TimeRange& range, const DiagnoseContext& context, int points) {
  double step = range.seconds() / std::max(1, points);
  return std::max({step, context.scrape_interval_seconds, 1.0});
}

}  // namespace jobmon::diagnose

namespace jobmon::diagnose::playbook {

namespace {

// The answer, or empty with the error kept in the result.
std::vector<Series> KeepingErrors(Expected<std::vector<Series>> answer, const std::string& promql,
                                  PlaybookResult& result) {
  if (!answer) {
    result.errors.push_back(fmt::format("{}: {}", promql, answer.error().message));
    return {};
  }
  return std::move(*answer);
}

// A label's value; empty when the series has none.
std::string LabelOf(const Labels& labels, const char* name) {
  auto it = labels.find(name);
  return it == labels.end() ? std::string() : it->second;
}

}  // namespace

std::vector<Series> Queries::Range(const std::string& promql, const TimeRange& range, double step) {
  return KeepingErrors(source_.QueryRange(promql, range, step), promql, result_);
}

std::vector<Series> Queries::Instant(const std::string& promql, double time) {
  return KeepingErrors(source_.QueryInstant(promql, time), promql, result_);
}

bool Wanted(const DiagnoseContext& context, std::string_view family) {
  return context.families.empty() || context.HasFamily(std::string(family));
}

std::vector<Series> Range(PromSource& source, PlaybookResult& result, const std::string& promql,
                          const TimeRange& range, const DiagnoseContext& context) {
  return Queries(source, result).Range(promql, range, StepFor(range, context));
}

std::vector<Series> Instant(PromSource& source, PlaybookResult& result, const std::string& promql,
                            double time) {
  return Queries(source, result).Instant(promql, time);
}

std::vector<Series> IncreaseOver(PromSource& source, PlaybookResult& result,
                                 std::string_view counter, const TimeRange& range,
                                 std::string_view selector) {
  return Instant(source, result, IncreaseExpr(counter, range, selector), range.end);
}

TimeRange WindowOrJob(const DiagnoseContext& context) {
  return context.window.seconds() > 0 ? context.window : context.job_range;
}

TimeRange SteadyRange(const DiagnoseContext& context, int64_t warmup_steps) {
  if (context.steps.empty()) return context.job_range;
  const int64_t first = context.steps.front().step;
  TimeRange range{context.steps.front().time, context.steps.back().time};
  if (auto after = context.TimeOfStep(first + warmup_steps); after && *after < range.end) {
    range.start = *after;
  }
  return range;
}

bool RateTouchesCheckpoint(double time, const DiagnoseContext& context) {
  const TimeRange span{time - context.rate_window_seconds, time};
  return std::any_of(context.checkpoints.begin(), context.checkpoints.end(), [&](const auto& c) {
    return c.range.start <= span.end && c.range.end >= span.start;
  });
}

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

double Median(std::vector<double> values) { return UpperMedian(std::move(values)); }

std::optional<double> SteadyMedian(const Series& series, const TimeRange& range,
                                   const DiagnoseContext& context) {
  std::vector<double> values;
  for (const auto& sample : series.samples) {
    if (range.Contains(sample.time) && !context.InCheckpoint(sample.time)) {
      values.push_back(sample.value);
    }
  }
  if (values.empty()) return std::nullopt;
  return Median(std::move(values));
}

std::optional<Run> LongestRun(const Series& series, const std::function<bool(double)>& above,
                              const std::function<bool(double)>& skip) {
  std::optional<Run> best;
  std::optional<Run> current;
  for (const auto& sample : series.samples) {
    const bool holds = !(skip && skip(sample.time)) && above(sample.value);
    if (!holds) {
      current.reset();
      continue;
    }
    if (!current) current = Run{sample.time, sample.time, sample.value, 0};
    current->end = sample.time;
    current->peak = std::max(current->peak, sample.value);
    ++current->samples;
    if (!best || current->samples > best->samples) best = current;
  }
  return best;
}

std::optional<double> Onset(const Series& series, const std::function<bool(double)>& deviates_far,
                            const std::function<bool(double)>& deviates_near,
                            const std::function<bool(double)>& skip, double from) {
  const auto& s = series.samples;
  auto skipped = [&](size_t i) { return skip && skip(s[i].time); };
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i].time < from || skipped(i) || !deviates_far(s[i].value)) continue;
    size_t first = i;
    while (first > 0 && !skipped(first - 1) && deviates_near(s[first - 1].value)) --first;
    return s[first].time;
  }
  return std::nullopt;
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

Finding MakeFinding(std::string code, Severity severity, std::string family, const Labels& labels,
                    std::optional<double> value, std::string unit, std::optional<double> time,
                    std::string text) {
  Finding f;
  f.code = std::move(code);
  f.severity = severity;
  f.family = std::move(family);
  f.host = LabelOf(labels, "host");
  f.gpu = LabelOf(labels, "gpu");
  f.device = LabelOf(labels, "device");
  if (auto port = LabelOf(labels, "port"); !port.empty() && !f.device.empty()) {
    f.device += "/" + port;
  }
  f.value = value;
  f.unit = std::move(unit);
  f.time = time;
  f.text = std::move(text);
  return f;
}

Finding MakeFinding(std::string code, Severity severity, std::string family, std::string host,
                    std::optional<double> value, std::string unit, std::optional<double> time,
                    std::string text) {
  return MakeFinding(std::move(code), severity, std::move(family),
                     Labels{{"host", std::move(host)}}, value, std::move(unit), time,
                     std::move(text));
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

std::string Where(const Labels& labels) {
  const std::string host = LabelOf(labels, "host"), gpu = LabelOf(labels, "gpu"),
                    device = LabelOf(labels, "device"), port = LabelOf(labels, "port");
  std::string out = host.empty() ? "?" : host;
  if (!gpu.empty()) out.append(":").append(gpu);
  if (!device.empty()) {
    out.append(" ").append(device);
    if (!port.empty()) out.append("/").append(port);
  }
  return out;
}

std::string At(double time) { return FormatIsoUtc(time); }

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
