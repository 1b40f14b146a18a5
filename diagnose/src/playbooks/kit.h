#pragma once
// The playbook kit: what the playbooks (and the comparison, discovery and
// the observability check) build their queries, numbers and findings
// from. Counters are read only through rate()/increase() inside the job's
// window, never by their absolute value (docs/diagnose.md, "Common
// pitfalls": RDMA counters count from boot). A failed query is kept in the
// result and answers empty: the verdict is then partial, not wrong.

#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "jobmon/common/percentile.h"  // Mean, UpperMedian: the statistics the playbooks use
#include "jobmon/diagnose/context.h"
#include "jobmon/diagnose/prom_source.h"
#include "jobmon/diagnose/result.h"

// PromQL and statistics over answers: in namespace diagnose, as the
// comparison, discovery and the observability check use them too.
namespace jobmon::diagnose {

// "rate(name{selector}[Ns])" with the context's rate window.
std::string RateExpr(std::string_view counter, const DiagnoseContext& context,
                     std::string_view selector = "");
// "increase(name{selector}[Ns])" over `range`, to evaluate at range.end.
std::string IncreaseExpr(std::string_view counter, const TimeRange& range,
                         std::string_view selector = "");
// "<fn>_over_time(name{selector}[Ns])" ("min", "max"): a gauge's extreme
// within each step of a range query, so a drop shorter than the step
// (a port flapping between two points) is not stepped over.
std::string OverTimeExpr(std::string_view fn, std::string_view gauge, double seconds,
                         std::string_view selector = "");
// `host=~"a|b"` (regex-quoted) for a selector; empty for no hosts.
std::string HostSelector(const std::vector<std::string>& hosts);

struct Stats {
  size_t count = 0;
  double min = 0, max = 0, mean = 0, last = 0;
  double first_time = 0, last_time = 0;
};
// Over the samples inside `range` (all when nullopt); nullopt when none.
std::optional<Stats> StatsOf(const Series& series,
                             const std::optional<TimeRange>& range = std::nullopt);
// Samples outside the context's checkpoint windows.
Series WithoutCheckpoints(const Series& series, const DiagnoseContext& context);
// First sample time where value > threshold (>= when `inclusive`).
std::optional<double> FirstTimeAbove(const Series& series, double threshold,
                                     bool inclusive = false);
// First sample time where value < threshold (a gauge falling: port state 0).
std::optional<double> FirstTimeBelow(const Series& series, double threshold);
// A step for a range query of `range`: about `points` points, at least the
// scrape interval.
double StepFor(const TimeRange& range, const DiagnoseContext& context, int points = 240);

}  // namespace jobmon::diagnose

namespace jobmon::diagnose::playbook {

// --- Asking ---

// Queries that record their failures in the result.
class Queries {
 public:
  Queries(PromSource& source, PlaybookResult& result) : source_(source), result_(result) {}
  // Empty on failure (the error goes to result.errors).
  std::vector<Series> Range(const std::string& promql, const TimeRange& range, double step);
  std::vector<Series> Instant(const std::string& promql, double time);

 private:
  PromSource& source_;
  PlaybookResult& result_;
};

// Whether to ask for a family: discovery found it, or discovery is unknown.
bool Wanted(const DiagnoseContext& context, std::string_view family);

// A range query over `range` at StepFor's step; a failure lands in
// result.errors, empty answer.
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

// --- The job's time and hosts ---

// The diagnosis' window when one is set, else the job's whole range.
TimeRange WindowOrJob(const DiagnoseContext& context);

// The job's training time without warmup: from the step after the first
// `warmup` steps (docs/diagnose.md's "skip warmup steps", 5-10) to the last
// step; the job's range when no steps are known.
TimeRange SteadyRange(const DiagnoseContext& context, int64_t warmup_steps = 5);

// A rate() sample at `time` covers [time - rate window, time]: it is a
// checkpoint's when that span touches a checkpoint window.
bool RateTouchesCheckpoint(double time, const DiagnoseContext& context);

// The job's hosts: those with samples and those the manifest names.
std::vector<std::string> JobHosts(const DiagnoseContext& context);

// --- Series and their numbers ---

// Series by their host label.
std::map<std::string, std::vector<const Series*>> ByHost(const std::vector<Series>& series);
// All sample values of `series` inside `range` (all when nullopt).
std::vector<double> Values(const std::vector<const Series*>& series,
                           const std::optional<TimeRange>& range = std::nullopt);
double Median(std::vector<double> values);
// Median of the samples in `range` not inside a checkpoint window.
std::optional<double> SteadyMedian(const Series& series, const TimeRange& range,
                                   const DiagnoseContext& context);

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

// A rate that jumps: the first sample inside `around` (outside checkpoint
// windows) above factor x max(floor, the series' own mean before
// around.start, outside checkpoints; inside them too when
// `skip_checkpoints` is false, to name NFS checkpoint traffic). The monitor's rule for a TCP
// retransmit burst before a stall: 10 x max(1/s, baseline).
struct Spike {
  double time = 0, value = 0, baseline = 0;
};
inline constexpr double kSpikeFactor = 10;
std::optional<Spike> RateSpike(const Series& rate, const TimeRange& around,
                               const DiagnoseContext& context, double factor = kSpikeFactor,
                               double floor = 1, bool skip_checkpoints = true);

// --- Findings ---

// A finding with host/gpu/device taken from the series' labels.
Finding MakeFinding(std::string code, Severity severity, std::string family, const Labels& labels,
                    std::optional<double> value, std::string unit, std::optional<double> time,
                    std::string text);
// The same for a host alone.
Finding MakeFinding(std::string code, Severity severity, std::string family, std::string host,
                    std::optional<double> value, std::string unit, std::optional<double> time,
                    std::string text);

// An RDMA port whose state (1 = ACTIVE) fell below 1 in the series:
// rdma-port-down with device/port and the first sample down; nullopt if
// it stayed up.
std::optional<Finding> PortDown(const Series& port_state);

// --- Numbers in sentences ---

// "host:gpu", "host device/port" or "host", for report lines.
std::string Where(const Labels& labels);
// ISO 8601 UTC, the one format of times in reports.
std::string At(double time);
// "2026-11-23 08:47:07 UTC"
std::string FormatTime(double unix_seconds);
// "12.3 GiB"
std::string FormatBytes(double bytes);
std::string Join(const std::vector<std::string>& items, std::string_view separator = ", ");

}  // namespace jobmon::diagnose::playbook
