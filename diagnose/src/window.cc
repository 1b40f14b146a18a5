#include "window.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "jobmon/common/metric_names.h"
#include "jobmon/triage/step_filter.h"
#include "jobmon/triage/step_lines.h"

namespace jobmon::diagnose {

namespace {

constexpr double kReferenceRateWindow = 300;  // docs/diagnose.md's [5m]

void AddIfLater(std::vector<StepTime>& out, int64_t step, double time) {
  // Steps rise; a repeat or a lower step (another host behind, a restart's
  // replay) keeps the first time seen.
  if (!out.empty() && step <= out.back().step) return;
  out.push_back({step, time});
}

}  // namespace

TriageFacts FactsFromTriage(const triage::TriageReport& report) {
  TriageFacts f;
  f.primary_class = report.primary == "none" ? "" : report.primary;
  f.status = triage::ToString(report.status);
  f.crash_time = report.failure_time;
  const triage::Progress& p = report.progress;
  if (report.primary == "hang" || report.status == triage::JobStatus::kHanging) {
    f.hang_start = p.last_step_time;
  }
  f.heartbeat_timeout_seconds = report.heartbeat_timeout_seconds;
  // Heartbeats stopped one timeout before the accusation (docs/diagnose.md,
  // "Step 4: the time window").
  if (report.heartbeat && f.crash_time && f.heartbeat_timeout_seconds) {
    f.heartbeat_stop = *f.crash_time - *f.heartbeat_timeout_seconds;
  }
  if (report.heartbeat) {
    for (int task : report.heartbeat->accused) {
      auto it = report.heartbeat->hosts.find(task);
      if (it != report.heartbeat->hosts.end() &&
          std::find(f.accused_hosts.begin(), f.accused_hosts.end(), it->second) ==
              f.accused_hosts.end()) {
        f.accused_hosts.push_back(it->second);
      }
    }
  }
  f.coordinator_host = report.head_node;
  f.last_step = p.last_step;
  if (p.checkpointing) f.checkpoint_period = p.checkpoint_period;
  return f;
}

std::vector<StepTime> StepMapFromSeries(const std::vector<Series>& tb_step) {
  std::map<double, double> by_time;  // time -> highest step any host had then
  for (const Series& s : tb_step) {
    for (const Sample& sample : s.samples) {
      auto [it, fresh] = by_time.emplace(sample.time, sample.value);
      if (!fresh) it->second = std::max(it->second, sample.value);
    }
  }
  std::vector<StepTime> out;
  for (const auto& [time, value] : by_time) {
    if (std::isfinite(value)) AddIfLater(out, std::llround(value), time);
  }
  return out;
}

std::vector<StepTime> StepMapFromLogLines(const std::vector<std::string_view>& lines, int year) {
  std::vector<StepTime> out;
  triage::StepFilter filter;
  std::optional<triage::StepProfile> profile;
  for (size_t i = 0; i < lines.size(); ++i) {
    auto detected = triage::DetectStep(lines[i]);
    if (!detected) continue;
    for (const auto& accepted : filter.Offer(detected->profile, detected->sample, i, lines[i])) {
      if (!profile) profile = detected->profile;
      if (detected->profile != *profile) continue;  // one profile: the first one counted
      std::optional<double> time = accepted.sample.timestamp;
      std::string_view text = lines[accepted.line];
      if (!time) time = triage::FindIsoTimestamp(text);
      if (!time) time = triage::ParseYearlessTimestamp(text, year);
      if (time) AddIfLater(out, accepted.sample.step, *time);
    }
  }
  return out;
}

Expected<std::vector<StepTime>> QueryStepMap(PromSource& source, const TimeRange& range,
                                             double step_seconds) {
  auto series =
      source.QueryRange(fmt::format("max({})", metric_names::kTbStep), range, step_seconds);
  if (!series.ok()) return series.error();
  return StepMapFromSeries(series.value());
}

std::vector<CheckpointWindow> CheckpointWindows(const std::vector<StepTime>& steps, int64_t period,
                                                int64_t after_steps) {
  std::vector<CheckpointWindow> out;
  if (period <= 0 || steps.empty()) return out;
  const int64_t first = steps.front().step, last = steps.back().step;
  for (int64_t save = std::max<int64_t>(period, (first + period - 1) / period * period);
       save <= last; save += period) {
    // Start: the last point before the save (the map may skip steps); end:
    // the first point at or past the steps after it, else the map's end.
    auto at = std::lower_bound(steps.begin(), steps.end(), save,
                               [](const StepTime& s, int64_t step) { return s.step < step; });
    double start = at == steps.begin() ? at->time : std::prev(at)->time;
    auto after = std::lower_bound(at, steps.end(), save + after_steps + 1,
                                  [](const StepTime& s, int64_t step) { return s.step < step; });
    double end = after == steps.end() ? steps.back().time : after->time;
    out.push_back({save, {start, end}});
  }
  return out;
}

double RateWindowSeconds(double job_seconds, double scrape_interval_seconds) {
  double window = std::min(kReferenceRateWindow, job_seconds / 4);
  return std::max(window, 4 * scrape_interval_seconds);
}

TimeRange WindowFor(std::string_view analysis_type, const DiagnoseContext& context) {
  const TimeRange job = context.job_range;
  auto clamp = [&](TimeRange r) {
    r.start = std::clamp(r.start, job.start, job.end);
    r.end = std::clamp(r.end, r.start, job.end);
    return r;
  };
  const TriageFacts& t = context.triage;
  if (analysis_type == "hang") {
    std::optional<double> last_good = t.hang_start;
    if (!last_good && t.last_step) last_good = context.TimeOfStep(*t.last_step);
    if (!last_good && !context.steps.empty()) last_good = context.steps.back().time;
    if (last_good) return clamp({*last_good, job.end});
  } else if (analysis_type == "heartbeat" && t.heartbeat_stop) {
    // A rate window of context before the stop, up to the accusation.
    double end = t.crash_time.value_or(*t.heartbeat_stop + context.rate_window_seconds);
    return clamp({*t.heartbeat_stop - context.rate_window_seconds, end});
  }
  return job;
}

CrossCheck CompareSteps(std::optional<int64_t> tsdb_last_step, std::optional<int64_t> log_last_step,
                        double steps_per_scrape) {
  CrossCheck c;
  if (!tsdb_last_step || !log_last_step) {
    c.sentence = !tsdb_last_step ? "not checked: the TSDB has no tb_step"
                                 : "not checked: the log has no step lines";
    return c;
  }
  c.checked = true;
  const int64_t apart = std::llabs(*tsdb_last_step - *log_last_step);
  const auto allowed = std::max<int64_t>(1, std::llround(std::ceil(steps_per_scrape)));
  c.matches = apart <= allowed;
  if (apart == 0) {
    c.sentence =
        fmt::format("tb_step at the job's end ({}) equals the log's last step", *tsdb_last_step);
  } else if (c.matches) {
    c.sentence = fmt::format(
        "tb_step at the job's end ({}) is within {} step(s) of the log's last step ({}): one "
        "scrape interval's worth",
        *tsdb_last_step, allowed, *log_last_step);
  } else {
    c.sentence = fmt::format(
        "tb_step at the job's end ({}) differs from the log's last step ({}) by {} steps, more "
        "than one scrape interval holds ({}): wrong TSDB?",
        *tsdb_last_step, *log_last_step, apart, allowed);
  }
  return c;
}

CrossCheck CrossCheckTsdb(PromSource& source, const DiagnoseContext& context) {
  std::optional<int64_t> tsdb_last;
  auto at_end =
      source.QueryInstant(fmt::format("max({})", metric_names::kTbStep), context.job_range.end);
  if (!at_end.ok()) {
    CrossCheck c;
    c.sentence = "not checked: " + at_end.error().message;
    return c;
  }
  for (const Series& s : at_end.value()) {
    if (!s.samples.empty() && std::isfinite(s.samples.back().value)) {
      tsdb_last = std::llround(s.samples.back().value);
    }
  }
  double steps_per_scrape = 1;
  if (context.steps.size() >= 2) {
    const StepTime &a = context.steps.front(), &b = context.steps.back();
    if (b.time > a.time) {
      steps_per_scrape = static_cast<double>(b.step - a.step) / (b.time - a.time) *
                         context.scrape_interval_seconds;
    }
  }
  return CompareSteps(tsdb_last, context.triage.last_step, steps_per_scrape);
}

}  // namespace jobmon::diagnose
