#include "access/session_support.h"

#include "access/tsdb_local.h"
#include "jobmon/diagnose/prom_json.h"

namespace jobmon::diagnose {

namespace {

std::optional<MsRange> HeadRange(const PromHttpSource& source) {
  auto body = source.Get("/api/v1/status/tsdb");
  if (!body) return std::nullopt;
  auto range = ParseTsdbHeadRange(*body);
  return range ? *range : std::nullopt;
}

}  // namespace

void Progress(const AccessOptions& options, const std::string& line) {
  if (options.progress) options.progress(line);
}

PromHttpOptions HttpOptions(const AccessOptions& options, std::string description) {
  PromHttpOptions out;
  out.timeout_seconds = options.query_timeout;
  out.max_body = options.max_response_bytes;
  out.description = std::move(description);
  return out;
}

bool Ready(const std::string& url, double timeout_seconds, const BasicAuth& auth) {
  PromHttpOptions options;
  options.basic_user = auth.user;
  options.basic_password = auth.password;
  options.timeout_seconds = timeout_seconds;
  options.connect_timeout_seconds = timeout_seconds;
  options.max_body = 4096;
  return PromHttpSource(url, options).Get("/-/ready").ok();
}

std::string ServedPath(const std::string& url, const BasicAuth& auth) {
  PromHttpOptions options;
  options.basic_user = auth.user;
  options.basic_password = auth.password;
  options.timeout_seconds = 5;
  options.max_body = 1 << 20;
  auto flags = PromHttpSource(url, options).Get("/api/v1/status/flags");
  if (!flags) return {};
  auto path = ParseStatusFlag(*flags, "storage.tsdb.path");
  return path && *path ? **path : std::string();
}

Expected<std::optional<TimeRange>> RangeOf(const std::string& local_dir,
                                           const PromHttpSource& source) {
  std::optional<MsRange> range;
  if (!local_dir.empty()) {
    auto tsdb = InspectTsdb(local_dir);
    if (!tsdb) return tsdb.error();
    range = BlocksRange(*tsdb);
  }
  range = Union(range, HeadRange(source));
  if (local_dir.empty()) {
    // The blocks are on the serving machine: ask Prometheus for its own
    // lowest timestamp (its /metrics, even when it scrapes nothing).
    auto metrics = source.Get("/metrics");
    if (metrics) range = Union(range, ParseTsdbTimesFromMetrics(*metrics));
  }
  if (!range) return std::optional<TimeRange>();
  return std::optional<TimeRange>(range->seconds());
}

}  // namespace jobmon::diagnose
