#pragma once
// Series builders and checks shared by the playbook unit tests (with
// canned_prom_source.h): a job of evenly spaced scrapes and its steps.

#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "counter_reads.h"
#include "jobmon/diagnose/context.h"
#include "jobmon/diagnose/prom_source.h"

namespace jobmon::diagnose::testing {

inline constexpr double kT0 = 1'700'000'000;  // the job's first scrape
inline constexpr double kScrape = 15;         // seconds between scrapes
inline constexpr int kScrapes = 80;           // 20 minutes

inline double TimeAt(int i) { return kT0 + kScrape * i; }

// One series over the job: value(i) at scrape i.
inline Series Over(Labels labels, const std::function<double(int)>& value, int n = kScrapes) {
  Series s{std::move(labels), {}};
  for (int i = 0; i < n; ++i) s.samples.push_back({TimeAt(i), value(i)});
  return s;
}
inline Series Flat(Labels labels, double value) {
  return Over(std::move(labels), [=](int) { return value; });
}

// One step per scrape from scrape 0; checkpoints of `period` steps cover the
// step and the two after it.
inline DiagnoseContext JobContext(int checkpoint_period = 0) {
  DiagnoseContext c;
  c.job = "42";
  c.job_range = c.tsdb_range = {TimeAt(0), TimeAt(kScrapes - 1)};
  c.hosts = {"n1", "n2"};
  c.scrape_interval_seconds = kScrape;
  c.rate_window_seconds = 60;
  for (int i = 0; i < kScrapes; ++i) c.steps.push_back({i, TimeAt(i)});
  if (checkpoint_period > 0) {
    for (int i = checkpoint_period; i < kScrapes; i += checkpoint_period) {
      c.checkpoints.push_back({i, {TimeAt(i), TimeAt(i + 2)}});
    }
  }
  return c;
}

// Counters (names ending _total) only inside rate()/increase().
inline void ExpectNoBareCounters(const std::vector<std::string>& asked) {
  for (const auto& query : asked) {
    for (const auto& name : BareCounterReads(query))
      ADD_FAILURE() << "bare counter " << name << " in " << query;
  }
}

}  // namespace jobmon::diagnose::testing
