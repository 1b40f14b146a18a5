#include "scrape_interval.h"

#include <algorithm>
#include <cmath>

#include "jobmon/common/duration.h"
#include "jobmon/common/text_lines.h"

namespace jobmon::diagnose {
namespace {

constexpr double kSliceSeconds = 300;  // enough scrapes at 15 s (20), cheap at 1 s
constexpr int kSlicePoints = 600;      // Prometheus answers up to 11000 per series
constexpr double kFinestStep = 0.1;    // finer than any scrape interval worth diagnosing

double MedianOf(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

std::string_view TrimBlanks(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
    s.remove_suffix(1);
  return s;
}

}  // namespace

std::optional<double> ScrapeIntervalFromTimes(const std::vector<std::vector<double>>& per_target) {
  std::vector<double> intervals;
  for (std::vector<double> times : per_target) {
    std::sort(times.begin(), times.end());
    times.erase(std::unique(times.begin(), times.end()), times.end());
    std::vector<double> spacing;
    for (size_t i = 1; i < times.size(); ++i) spacing.push_back(times[i] - times[i - 1]);
    if (!spacing.empty()) intervals.push_back(MedianOf(spacing));
  }
  if (intervals.empty()) return std::nullopt;
  const double seconds = std::round(MedianOf(intervals) * 1000) / 1000;
  if (seconds <= 0) return std::nullopt;
  return seconds;
}

std::optional<double> ScrapeIntervalFromConfig(std::string_view yaml) {
  bool in_global = false;
  for (std::string_view line : TextLines(yaml)) {
    if (const size_t hash = line.find('#'); hash != std::string_view::npos) {
      line = line.substr(0, hash);
    }
    if (TrimBlanks(line).empty()) continue;
    const bool indented = line.front() == ' ' || line.front() == '\t';
    if (!indented) {
      in_global = TrimBlanks(line) == "global:";
      continue;
    }
    std::string_view entry = TrimBlanks(line);
    constexpr std::string_view kKey = "scrape_interval:";
    if (!in_global || entry.substr(0, kKey.size()) != kKey) continue;
    std::string_view value = TrimBlanks(entry.substr(kKey.size()));
    if (value.size() >= 2 && (value.front() == '"' || value.front() == '\'') &&
        value.back() == value.front()) {
      value = value.substr(1, value.size() - 2);
    }
    auto seconds = ParseDurationSeconds(value);
    if (!seconds.ok() || seconds.value() <= 0) return std::nullopt;
    return seconds.value();
  }
  return std::nullopt;
}

FoundInterval DiscoverScrapeInterval(PromSource& source, const TimeRange& range) {
  FoundInterval out;
  if (range.seconds() <= 0) return out;
  const double width = std::min(range.seconds(), kSliceSeconds);
  const double middle = range.start + range.seconds() / 2;
  const TimeRange slice{std::max(range.start, middle - width / 2),
                        std::min(range.end, middle + width / 2)};
  const double step = std::max(kFinestStep, slice.seconds() / kSlicePoints);
  auto answer = source.QueryRange("timestamp(up)", slice, step);
  if (!answer.ok()) {
    out.error = answer.error().message;
    return out;
  }
  std::vector<std::vector<double>> per_target;
  for (const Series& s : answer.value()) {
    std::vector<double> times;
    for (const Sample& sample : s.samples) times.push_back(sample.value);
    per_target.push_back(std::move(times));
  }
  out.seconds = ScrapeIntervalFromTimes(per_target);
  return out;
}

}  // namespace jobmon::diagnose
