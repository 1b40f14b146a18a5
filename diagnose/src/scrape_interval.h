#pragma once
// How often the job's Prometheus scraped, read from the data itself: every
// threshold counted in scrapes (the rate window, gaps, ghost data, the query
// step that dates an excursion) depends on it, and jobs differ (the plugin's
// default 5 s, a user's 15 s, a dev cluster's 1 s). `up` has one sample per
// scrape attempt, whether the target answered or not, so the spacing of its
// samples is the interval. The prometheus.yml of the diag dir is the
// fallback when the data cannot tell (no `up`, a query failed).

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "jobmon/diagnose/prom_source.h"

namespace jobmon::diagnose {

// Per target the median spacing of its distinct sample times (a missed
// scrape or two do not move it), then the median over targets, to the
// millisecond; nullopt when no target has two samples.
std::optional<double> ScrapeIntervalFromTimes(const std::vector<std::vector<double>>& per_target);

// The `scrape_interval` of a prometheus.yml's `global:` section, in seconds;
// nullopt when absent or not a duration.
std::optional<double> ScrapeIntervalFromConfig(std::string_view yaml);

struct FoundInterval {
  std::optional<double> seconds;
  std::string error;  // the query's failure, when it failed
};

// timestamp(up) over a slice of `range` around its middle (at most 5 min),
// at a query step well under any real scrape interval, so each scrape's own
// time appears: ScrapeIntervalFromTimes over the targets.
FoundInterval DiscoverScrapeInterval(PromSource& source, const TimeRange& range);

}  // namespace jobmon::diagnose
