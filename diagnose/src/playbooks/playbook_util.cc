#include "playbook_util.h"

#include <fmt/format.h>

#include <algorithm>

#include "jobmon/common/iso_time.h"
#include "jobmon/diagnose/query_helpers.h"

namespace jobmon::diagnose::playbook {

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

double Median(std::vector<double> values) {
  if (values.empty()) return 0;
  auto mid = values.begin() + static_cast<std::ptrdiff_t>(values.size() / 2);
  std::nth_element(values.begin(), mid, values.end());
  return *mid;
}

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

Finding MakeFinding(std::string code, Severity severity, std::string family, const Labels& labels,
                    std::optional<double> value, std::string unit, std::optional<double> time,
                    std::string text) {
  Finding f;
  f.code = std::move(code);
  f.severity = severity;
  f.family = std::move(family);
  auto label = [&](const char* name) {
    auto it = labels.find(name);
    return it == labels.end() ? std::string() : it->second;
  };
  f.host = label("host");
  f.gpu = label("gpu");
  f.device = label("device");
  if (auto port = label("port"); !port.empty() && !f.device.empty()) f.device += "/" + port;
  f.value = value;
  f.unit = std::move(unit);
  f.time = time;
  f.text = std::move(text);
  return f;
}

std::string Where(const Labels& labels) {
  auto label = [&](const char* name) {
    auto it = labels.find(name);
    return it == labels.end() ? std::string() : it->second;
  };
  std::string out = label("host").empty() ? "?" : label("host");
  if (!label("gpu").empty()) out += ":" + label("gpu");
  if (!label("device").empty()) {
    out += " " + label("device");
    if (!label("port").empty()) out += "/" + label("port");
  }
  return out;
}

std::string At(double time) { return FormatIsoUtc(time); }

}  // namespace jobmon::diagnose::playbook
