// OpenCentralStore (central_store.h): the store's query API behind a
// JobScopedSource, the job's time range found from its own `up` samples.
#include "jobmon/diagnose/central_store.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <ctime>

#include "access/job_scope.h"
#include "access/session_support.h"
#include "jobmon/common/text_lines.h"
#include "jobmon/common/unique_fd.h"
#include "jobmon/diagnose/prom_http.h"

namespace jobmon::diagnose {

namespace {

class StoreSession : public TsdbSession {
 public:
  StoreSession(std::string url, PromHttpOptions http, std::string matchers, std::string describe)
      : http_(std::move(url), std::move(http)),
        scoped_(http_, std::move(matchers), std::move(describe)) {}
  PromSource& source() override { return scoped_; }
  std::string local_tsdb_dir() const override { return {}; }
  bool live() const override { return false; }
  Expected<std::optional<TimeRange>> DataRange() override { return range_; }
  std::string url() const override { return http_.base_url(); }
  JobScopedSource& scoped() { return scoped_; }
  void set_range(std::optional<TimeRange> range) { range_ = range; }

 private:
  PromHttpSource http_;
  JobScopedSource scoped_;
  std::optional<TimeRange> range_;
};

std::string Joined(const std::vector<std::string>& values) {
  std::string out;
  for (const auto& v : values) out += (out.empty() ? "" : ", ") + v;
  return out;
}

}  // namespace

Expected<std::string> ReadBearerTokenFile(const std::string& path) {
  UniqueFd fd(open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK));
  if (!fd.valid()) return Error{fmt::format("token file {}: {}", path, std::strerror(errno))};
  struct stat st {};
  if (fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode))
    return Error{"token file " + path + ": not a regular file"};
  if ((st.st_mode & 077) != 0)
    return Error{
        fmt::format("token file {} is readable or writable by others (mode {:04o}): "
                    "chmod 600 it",
                    path, st.st_mode & 07777)};
  if (st.st_uid != geteuid())
    return Error{"token file " + path + ": not owned by the user running jobmon"};
  std::string text(4096, '\0');
  ssize_t n = read(fd.get(), text.data(), text.size());
  if (n < 0) return Error{fmt::format("token file {}: {}", path, std::strerror(errno))};
  text.resize(static_cast<size_t>(n));
  const std::string_view line = FirstLine(text);
  const size_t first = line.find_first_not_of(" \t\r");
  const size_t last = line.find_last_not_of(" \t\r");
  if (first == std::string_view::npos) return Error{"token file " + path + ": empty"};
  return std::string(line.substr(first, last - first + 1));
}

std::optional<TimeRange> BoundsFromCounts(const std::vector<Series>& counts, double step) {
  std::optional<double> first, last;
  for (const Series& s : counts) {
    for (const Sample& sample : s.samples) {
      if (!(sample.value > 0)) continue;
      first = std::min(first.value_or(sample.time), sample.time);
      last = std::max(last.value_or(sample.time), sample.time);
    }
  }
  if (!first) return std::nullopt;
  // A point counts the samples of the step before it.
  return TimeRange{*first - step, *last};
}

Expected<std::optional<TimeRange>> FindJobRange(PromSource& scoped, const TimeRange& search,
                                                int points) {
  std::optional<TimeRange> range = search;
  double step = 0;
  for (int pass = 0; pass < 2 && range; ++pass) {
    // Whole seconds, at least a second: the range selector's duration.
    step = std::max(1.0, std::ceil(range->seconds() / std::max(1, points)));
    const TimeRange grid{range->start + step, range->end + step};
    auto counts = scoped.QueryRange(fmt::format("count_over_time(up[{:.0f}s])", step), grid, step);
    if (!counts) return counts.error();
    range = BoundsFromCounts(*counts, step);
  }
  // A step of margin on each side: discovery's timestamp(up) grid (its own
  // step, aligned by the store) must reach past the last sample to see it.
  if (range) range = TimeRange{range->start - step, range->end + step};
  return range;
}

Expected<std::unique_ptr<TsdbSession>> OpenCentralStore(const std::string& job_id,
                                                        const CentralStore& store,
                                                        const AccessOptions& options) {
  if (job_id.empty()) return Error{"the central store is searched by job id: none is known"};
  const std::string matchers = JobMatchers(job_id, store.cluster);
  PromHttpOptions http = HttpOptions(options, "");
  // VictoriaMetrics caches range answers for data older than
  // -search.cacheTimestampOffset (5m); a job's samples that arrived late
  // (remote_write backlog, a backfill) would be missing from them. Prometheus
  // ignores the parameter.
  http.extra_query = "nocache=1";
  if (!store.bearer_token.empty())
    http.headers.push_back("Authorization: Bearer " + store.bearer_token);
  auto session =
      std::make_unique<StoreSession>(store.url, std::move(http), matchers,
                                     fmt::format("central store {} ({{{}}})", store.url, matchers));
  const double now = static_cast<double>(std::time(nullptr));
  const TimeRange search{now - store.lookback_seconds, now};
  // The job id alone may name jobs of several clusters (ids are per
  // cluster): their series would mix.
  auto clusters = session->scoped().LabelValues("cluster", search);
  if (!clusters) return Error{store.url + ": " + clusters.error().message};
  if (store.cluster.empty() && clusters->size() > 1)
    return Error{fmt::format("{}: job {} is there for clusters {}: name one with --cluster",
                             store.url, job_id, Joined(*clusters))};
  Progress(options, fmt::format("finding job {}'s data in the central store {} (last {:.0f} days)",
                                job_id, store.url, store.lookback_seconds / 86400));
  auto range = FindJobRange(session->scoped(), search);
  if (!range) return Error{store.url + ": " + range.error().message};
  if (!*range)
    return Error{fmt::format("{}: no `up` series with {{{}}} in the last {:.0f} days", store.url,
                             matchers, store.lookback_seconds / 86400)};
  session->set_range(*range);
  return std::unique_ptr<TsdbSession>(std::move(session));
}

}  // namespace jobmon::diagnose
