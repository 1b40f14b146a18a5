#pragma once
// Broken observability as code (docs/diagnose.md, "Broken
// observability"): ghost data (an exporter serving stale values
// that Prometheus stamps afresh), gaps, hosts missing, families missing,
// collectors failing, slow scrapes, exporters down. What it finds is
// reported beside the playbooks, with the host/family/time ranges not to
// trust. The run finders are pure; CheckObservability queries.

#include <functional>
#include <vector>

#include "jobmon/diagnose/context.h"
#include "jobmon/diagnose/prom_source.h"
#include "jobmon/diagnose/result.h"

namespace jobmon::diagnose {

// Above this a scrape is slow (the reference: hw_scrape_duration_seconds > 8s).
inline constexpr double kSlowScrapeSeconds = 8;

// How long a value may hold exactly still before it is ghost data: the
// reference's 5 minutes, shortened for short jobs to a quarter of the job
// but never under 12 scrapes, and never under 3 query steps.
double GhostMinSeconds(const DiagnoseContext& context, double query_step);
// No sample for longer than this is a gap: 3 scrape intervals (the
// reference's), or 2 query steps when the query is coarser than the scrape.
double GapSeconds(const DiagnoseContext& context, double query_step);

// Runs of samples holding exactly the same value for longer than
// `min_seconds` (first to last sample of the run).
std::vector<TimeRange> FlatRuns(const Series& series, double min_seconds);
// Runs of consecutive samples (no two further apart than `max_spacing`)
// for which `match` holds, first to last matching sample.
std::vector<TimeRange> RunsWhere(const Series& series, const std::function<bool(double)>& match,
                                 double max_spacing);
// Times inside `within` with no sample for longer than `max_gap`: between
// samples, before the first and after the last.
std::vector<TimeRange> Gaps(const std::vector<double>& sample_times, const TimeRange& within,
                            double max_gap);

// Over the job's range; failed queries become ObservabilityResult.errors.
ObservabilityResult CheckObservability(PromSource& source, const DiagnoseContext& context);

}  // namespace jobmon::diagnose
