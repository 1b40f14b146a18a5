// The scrape interval from the data (the spacing of `up` samples) and from
// the diag dir's prometheus.yml, the fallback.
#include "scrape_interval.h"

#include <gtest/gtest.h>

#include <cmath>

#include "canned_prom_source.h"
#include "diagnose_series.h"

namespace jobmon::diagnose {
namespace {

using testing::CannedPromSource;
using testing::Grid;

TEST(ScrapeInterval, MedianSpacingPerTargetThenOverTargets) {
  // A missed scrape (the gap 3 -> 5) and a repeated time (the lookback of
  // a query step finer than the scrapes) do not move it.
  std::vector<double> node1 = {0, 1, 2, 3, 3, 5, 6, 7, 8};
  std::vector<double> node2 = {0.4, 1.4, 2.4, 3.4, 4.4};
  EXPECT_EQ(ScrapeIntervalFromTimes({node1, node2}), 1.0);
  // Scrape jitter of a few ms is rounded to the millisecond.
  EXPECT_EQ(ScrapeIntervalFromTimes({{10.0, 15.0021, 20.0, 25.0019, 30.0}}), 5.0);
  EXPECT_EQ(ScrapeIntervalFromTimes({{0, 15, 30}, {2, 17, 32}, {1, 6}}), 15.0);
}

TEST(ScrapeInterval, NothingToMeasureIsNoInterval) {
  EXPECT_FALSE(ScrapeIntervalFromTimes({}));
  EXPECT_FALSE(ScrapeIntervalFromTimes({{5}, {7, 7, 7}}));
}

TEST(ScrapeInterval, FromThePluginsPrometheusYml) {
  // What spank/lifecycle/prometheus_config.cc writes.
  const char* yml =
      "# Written by jobmon's spank_diag for job 7; the exporters' targets appear in targets/\n"
      "global:\n"
      "  scrape_interval: 1s\n"
      "  scrape_timeout: 1s\n"
      "  evaluation_interval: 1s\n"
      "scrape_configs:\n"
      "  - job_name: jobmon-exporter\n"
      "    scrape_interval: 30s\n";
  EXPECT_EQ(ScrapeIntervalFromConfig(yml), 1.0);
  EXPECT_EQ(ScrapeIntervalFromConfig("global:\n  scrape_interval: \"1m30s\"  # slow\n"), 90.0);
  EXPECT_EQ(ScrapeIntervalFromConfig("global:\n  scrape_interval: 500ms\n"), 0.5);
}

TEST(ScrapeInterval, ConfigWithoutAGlobalIntervalIsNone) {
  // A job's own interval is not the global one; neither is a broken value.
  EXPECT_FALSE(ScrapeIntervalFromConfig(
      "global:\n  evaluation_interval: 5s\nscrape_configs:\n  - scrape_interval: 30s\n"));
  EXPECT_FALSE(ScrapeIntervalFromConfig("global:\n  scrape_interval: soon\n"));
  EXPECT_FALSE(ScrapeIntervalFromConfig(""));
}

// timestamp(up) as Prometheus answers it at a fine step: each grid point
// carries the time of the last scrape at or before it.
Series UpTimes(Labels labels, double start, double end, double every, double step) {
  Series s{std::move(labels), {}};
  for (double t = start; t <= end; t += step) {
    s.samples.push_back(Sample{t, start + every * std::floor((t - start) / every)});
  }
  return s;
}

TEST(ScrapeInterval, DiscoveredFromUpAtAFineStep) {
  for (double every : {1.0, 5.0, 15.0}) {
    CannedPromSource source;
    source.Answer("timestamp(up)", {UpTimes({{"host", "n1"}}, 1000, 1600, every, 0.5),
                                    UpTimes({{"host", "n2"}}, 1000.3, 1600, every, 0.5)});
    FoundInterval found = DiscoverScrapeInterval(source, {1000, 1600});
    EXPECT_EQ(found.seconds, every);
    EXPECT_TRUE(found.error.empty());
    ASSERT_EQ(source.asked().size(), 1u);
  }
}

TEST(ScrapeInterval, NoUpOrAFailedQueryLeavesTheFallback) {
  CannedPromSource empty;
  EXPECT_FALSE(DiscoverScrapeInterval(empty, {1000, 1600}).seconds);
  EXPECT_FALSE(DiscoverScrapeInterval(empty, {1000, 1000}).seconds) << "an empty TSDB";
  struct Failing : CannedPromSource {
    Expected<std::vector<Series>> QueryRange(std::string_view, const TimeRange&, double) override {
      return Error{"connection refused"};
    }
  } failing;
  FoundInterval found = DiscoverScrapeInterval(failing, {1000, 1600});
  EXPECT_FALSE(found.seconds);
  EXPECT_EQ(found.error, "connection refused");
}

}  // namespace
}  // namespace jobmon::diagnose
