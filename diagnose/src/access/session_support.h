#pragma once
// What the TSDB sessions share (tsdb_access.cc, readonly_prometheus.cc):
// progress lines, HTTP options, probing a Prometheus, a session's range.

#include <optional>
#include <string>

#include "jobmon/diagnose/prom_http.h"
#include "jobmon/diagnose/tsdb_access.h"

namespace jobmon::diagnose {

void Progress(const AccessOptions& options, const std::string& line);
PromHttpOptions HttpOptions(const AccessOptions& options, std::string description);
// Credentials of a read-only Prometheus we started (web_auth.h); empty for
// one we did not.
struct BasicAuth {
  std::string user, password;
};
// /-/ready answers 200 once the TSDB is loaded (the WAL replayed).
bool Ready(const std::string& url, double timeout_seconds, const BasicAuth& auth = {});
// The TSDB a Prometheus serves (its --storage.tsdb.path); empty if unknown.
std::string ServedPath(const std::string& url, const BasicAuth& auth = {});
// The blocks in local_dir (when given), the head, and, with no local dir,
// the instance's own /metrics.
Expected<std::optional<TimeRange>> RangeOf(const std::string& local_dir,
                                           const PromHttpSource& source);

}  // namespace jobmon::diagnose
