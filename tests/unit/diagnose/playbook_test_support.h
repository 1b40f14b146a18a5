#pragma once
// Shared by the playbook unit tests: series shaped like a scenario, a
// context for a job, and the check that counters were read only through
// rate()/increase() (docs/diagnose.md, "Common pitfalls").

#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "counter_reads.h"
#include "jobmon/diagnose/context.h"
#include "jobmon/diagnose/prom_source.h"
#include "jobmon/diagnose/result.h"

namespace jobmon::diagnose::testing {

// value(t) every `step` seconds from `start` to `end`, both included.
inline Series Shaped(Labels labels, double start, double end, double step,
                     const std::function<double(double)>& value) {
  Series s{std::move(labels), {}};
  for (double t = start; t <= end + 1e-9; t += step) s.samples.push_back({t, value(t)});
  return s;
}

inline Series Constant(Labels labels, double start, double end, double step, double value) {
  return Shaped(std::move(labels), start, end, step, [value](double) { return value; });
}

inline DiagnoseContext JobContext(std::vector<std::string> hosts, double start, double end) {
  DiagnoseContext c;
  c.job = "test";
  c.tsdb_range = c.job_range = c.window = {start, end};
  c.hosts = std::move(hosts);
  c.scrape_interval_seconds = 5;
  c.rate_window_seconds = 60;
  return c;
}

// Every "<name>_total" in every query sits right inside rate( or increase(.
inline void ExpectCountersOnlyThroughRateOrIncrease(const std::vector<std::string>& asked) {
  for (const auto& query : asked) {
    for (const auto& name : BareCounterReads(query))
      ADD_FAILURE() << "bare counter read " << name << ": " << query;
  }
}

inline const Finding* FindingOf(const PlaybookResult& r, const std::string& code,
                                const std::string& host = "") {
  for (const auto& f : r.anomalies) {
    if (f.code == code && (host.empty() || f.host == host)) return &f;
  }
  return nullptr;
}

// A clean job: nothing at warning or above.
inline void ExpectNoFault(const PlaybookResult& r) {
  for (const auto& f : r.anomalies) {
    EXPECT_EQ(f.severity, Severity::kInfo) << f.code << ": " << f.text;
  }
}

}  // namespace jobmon::diagnose::testing
