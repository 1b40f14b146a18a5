#pragma once
// PromQL the playbooks share, and statistics over answers. Counters are
// read only through rate()/increase() inside the job's window, never by
// their absolute value (tsdb-diagnosis.md, "Common Pitfalls": RDMA counters
// count from boot).

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "jobmon/diagnose/context.h"
#include "jobmon/diagnose/prom_source.h"

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
