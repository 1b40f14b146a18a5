#pragma once
// What the TSDB holds, before any playbook (docs/diagnose.md, workflow
// step 3, "Always query all metrics first"): its metric families, its hosts,
// its time range and the job's, and when each host was last scraped. The
// TSDB's own range comes from the caller (block meta.json / headStats).

#include <optional>
#include <string>
#include <vector>

#include "jobmon/diagnose/context.h"
#include "jobmon/diagnose/prom_source.h"

namespace jobmon::diagnose {

struct DiscoveryInputs {
  TimeRange tsdb_range;                     // what the TSDB covers
  std::vector<std::string> expected_hosts;  // the manifest's nodes; empty: unknown
  double scrape_interval_seconds = 5;
};

struct HostLastScrape {
  std::string host;
  std::optional<double> last_up;         // last `up == 1` (at the query's step)
  std::optional<double> last_collector;  // last hw_collector_success sample
};

struct Discovery {
  std::vector<std::string> families;  // sorted
  std::vector<std::string> hosts;     // sorted
  TimeRange tsdb_range;
  TimeRange job_range;  // first to last scrape (`up` sample); the TSDB's range without one
  std::vector<HostLastScrape> last_scrape;
  std::vector<std::string> errors;  // queries that failed (discovery goes on)
};

Discovery Discover(PromSource& source, const DiscoveryInputs& inputs);

// Families, hosts and ranges into the context every playbook reads.
void ApplyDiscovery(const Discovery& discovery, const DiscoveryInputs& inputs,
                    DiagnoseContext& context);

// "14 families (hw_gpu_* 9, hw_tcp_* 2, tb_* 3), 2 hosts, 3.2m of data":
// the progress line and the report's first sentence.
std::string DescribeDiscovery(const Discovery& discovery);

}  // namespace jobmon::diagnose
