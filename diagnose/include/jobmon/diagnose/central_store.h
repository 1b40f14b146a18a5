#pragma once
// A job's metrics in the cluster's central store (VictoriaMetrics or
// Prometheus, fed by the plugin's remote_write), for `jobmon diagnose
// --store URL` and for jobs whose archive is gone ([diagnose] store_url).
// Every query is confined to the job (job_scope.h); the job's time range
// is found from its own `up` samples, not from the store's whole range.

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "jobmon/common/expected.h"
#include "jobmon/diagnose/prom_source.h"
#include "jobmon/diagnose/tsdb_access.h"

namespace jobmon::diagnose {

struct CentralStore {
  std::string url;           // "http://127.0.0.1:8428" (VictoriaMetrics' default port)
  std::string cluster;       // the `cluster` label; empty: the store holds one cluster
  std::string bearer_token;  // sent as Authorization; never logged or reported
  double lookback_seconds = 31 * 86400.0;  // how far back the job's data is searched
};

// A bearer token from a file that no one but its owner may read (0600 or
// 0400, a regular file, no link); its first line, without surrounding
// whitespace. The error names the path and the mode, never the content.
Expected<std::string> ReadBearerTokenFile(const std::string& path);

// Pure: the span `count_over_time(up[step])` answered at `step` spacing has
// data in: from one step before its first non-zero point to its last one.
// nullopt: no point is non-zero.
std::optional<TimeRange> BoundsFromCounts(const std::vector<Series>& counts, double step);

// The job's data range within `search`, narrowed in two passes of about
// `points` points each, so a job of minutes in a month of retention is
// found to a few seconds' worth of steps. `source` must be job-scoped.
Expected<std::optional<TimeRange>> FindJobRange(PromSource& scoped, const TimeRange& search,
                                                int points = 1000);

// A session on the store for `job_id`: no process started, nothing to
// clean up. An error when the store does not answer, holds no series of
// the job, or holds the job id for several clusters and none was named.
Expected<std::unique_ptr<TsdbSession>> OpenCentralStore(const std::string& job_id,
                                                        const CentralStore& store,
                                                        const AccessOptions& options);

}  // namespace jobmon::diagnose
