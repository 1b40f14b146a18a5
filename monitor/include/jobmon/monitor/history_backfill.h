#pragma once
// Scrape mode after a restart: a job the daemon did not watch while it
// trained has its past evidence in its own Prometheus, reached through its
// head node's exporter (common/include/jobmon/common/job_history.h). The
// answer fills the job's window as store mode's back-fill does, so the
// training baselines, and with them the stall's class, are the same as if
// the daemon had never stopped.

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "jobmon/common/expected.h"
#include "jobmon/diagnose/prom_source.h"
#include "jobmon/monitor/metric_window.h"
#include "jobmon/monitor/store_query.h"

namespace jobmon::monitor {

// The families asked: `up` and every family the window reads.
std::vector<std::string> HistoryFamilies();

// The step asked over a span: the span in at most ~720 points, never below
// one second, so a window of an hour is read at 5 s.
double HistoryStep(double span_seconds);

// A job's Prometheus answer as per-host scrapes: its series carry no job
// label (the job's id is an external label, added only on remote_write),
// so every series is the job's; hosts outside `hosts` (the job's nodes,
// empty: any) are dropped, and the window's limits apply as for a store.
std::map<std::string, std::vector<StoreScrape>> JobHistoryScrapes(
    uint32_t job_id, std::vector<diagnose::Series> series, const std::set<std::string>& hosts,
    const WindowLimits& limits = {});

// Asks the head node's exporter at `exporter_address` ("10.0.0.11:9400")
// for the job's history over [from, until].
Expected<std::map<std::string, std::vector<StoreScrape>>> FetchJobHistory(
    const std::string& exporter_address, uint32_t job_id, const std::set<std::string>& hosts,
    double from, double until, double timeout_seconds);

}  // namespace jobmon::monitor
