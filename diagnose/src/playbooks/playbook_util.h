#pragma once
// Pieces the health playbooks (5 GPU, 6 network, 7 training) share: asking
// without aborting on a failed query (the error is kept, the verdict is then
// partial), steady-state windows, runs above a threshold, the onset of an
// excursion, and findings built from a series' labels.

#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "jobmon/diagnose/context.h"
#include "jobmon/diagnose/prom_source.h"
#include "jobmon/diagnose/result.h"
#include "queries.h"

namespace jobmon::diagnose::playbook {

// A range query over `range`; a failure lands in result.errors, empty answer.
std::vector<Series> Range(PromSource& source, PlaybookResult& result, const std::string& promql,
                          const TimeRange& range, const DiagnoseContext& context);
// An instant query at `time`; the same on failure.
std::vector<Series> Instant(PromSource& source, PlaybookResult& result, const std::string& promql,
                            double time);
// increase() of a counter over the whole of `range`, per series, at its end:
// only what the job itself added (counters count from boot).
std::vector<Series> IncreaseOver(PromSource& source, PlaybookResult& result,
                                 std::string_view counter, const TimeRange& range,
                                 std::string_view selector = "");

// The job's training time without warmup: from the step after the first
// `warmup` steps (the reference's "skip warmup steps", 5-10) to the last
// step; the job's range when no steps are known.
TimeRange SteadyRange(const DiagnoseContext& context, int64_t warmup_steps = 5);

// A rate() sample at `time` covers [time - rate window, time]: it is a
// checkpoint's when that span touches a checkpoint window.
bool RateTouchesCheckpoint(double time, const DiagnoseContext& context);

struct Run {
  double start = 0, end = 0;  // first and last sample of the run
  double peak = 0;
  size_t samples = 0;
};
// The longest run of consecutive samples for which `above` holds, skipping
// (and breaking runs at) samples `skip` rejects; nullopt when none holds.
std::optional<Run> LongestRun(const Series& series, const std::function<bool(double)>& above,
                              const std::function<bool(double)>& skip = nullptr);

// Where an excursion began: from the first sample at or after `from` that
// satisfies `deviates_far`, walk back while `deviates_near` holds. The
// reference's "find the earliest anomaly" at the resolution of one series.
// Samples `skip` rejects (by time: checkpoint windows) neither start nor
// extend an excursion.
std::optional<double> Onset(const Series& series, const std::function<bool(double)>& deviates_far,
                            const std::function<bool(double)>& deviates_near,
                            const std::function<bool(double)>& skip = nullptr,
                            double from = -std::numeric_limits<double>::infinity());

double Median(std::vector<double> values);
// Median of the samples in `range` not inside a checkpoint window.
std::optional<double> SteadyMedian(const Series& series, const TimeRange& range,
                                   const DiagnoseContext& context);

// A finding with host/gpu/device taken from the series' labels.
Finding MakeFinding(std::string code, Severity severity, std::string family, const Labels& labels,
                    std::optional<double> value, std::string unit, std::optional<double> time,
                    std::string text);
// "host:gpu", "host device/port" or "host", for report lines.
std::string Where(const Labels& labels);
// ISO 8601 UTC, the one format of times in reports.
std::string At(double time);

}  // namespace jobmon::diagnose::playbook
