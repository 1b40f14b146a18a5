#include "jobmon/diagnose/query_helpers.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace jobmon::diagnose {

namespace {

std::string WithSelector(std::string_view name, std::string_view selector) {
  if (selector.empty()) return std::string(name);
  return fmt::format("{}{{{}}}", name, selector);
}

long WholeSeconds(double seconds) { return std::max(1L, std::lround(std::ceil(seconds))); }

// RE2 metacharacters in a host name (dots, mostly) match literally.
std::string RegexQuote(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (std::string_view(R"(\.+*?()|[]{}^$)").find(c) != std::string_view::npos) out += "\\\\";
    out += c;
  }
  return out;
}

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
    alternatives += RegexQuote(host);
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
