// OpenTsdb: which way to a job's TSDB (tsdb_access.h): a URL given, a
// running job's own Prometheus, or a read-only one we start
// (readonly_prometheus.h) over a TSDB copy or an unpacked archive.
#include "jobmon/diagnose/tsdb_access.h"

#include <fmt/format.h>
#include <unistd.h>

#include "access/readonly_prometheus.h"
#include "access/session_support.h"
#include "access/tsdb_local.h"
#include "jobmon/diagnose/prom_http.h"

namespace jobmon::diagnose {

namespace {

std::string ShortHostName() {
  char name[256] = {};
  if (gethostname(name, sizeof(name) - 1) != 0) return {};
  std::string out = name;
  return out.substr(0, out.find('.'));
}

// A Prometheus we did not start: a live job's, a tunnel, a URL given.
class RemoteSession : public TsdbSession {
 public:
  RemoteSession(std::string url, PromHttpOptions options, bool live)
      : source_(std::move(url), std::move(options)), live_(live) {}
  PromSource& source() override { return source_; }
  std::string local_tsdb_dir() const override { return {}; }
  bool live() const override { return live_; }
  Expected<std::optional<TimeRange>> DataRange() override { return RangeOf({}, source_); }
  std::string url() const override { return source_.base_url(); }

 private:
  PromHttpSource source_;
  bool live_;
};

bool LiveState(const std::string& state) { return state == "starting" || state == "running"; }

}  // namespace

Expected<std::optional<TimeRange>> TsdbSession::DataRange() {
  const std::string dir = local_tsdb_dir();
  if (dir.empty()) return std::optional<TimeRange>();
  return LocalTsdbRange(dir);
}

Expected<std::unique_ptr<TsdbSession>> OpenTsdb(const ResolvedTarget& target,
                                                const AccessOptions& options) {
  const std::optional<Manifest>& manifest = target.manifest;
  const bool live_state = manifest && LiveState(manifest->state) && !options.job_ended;
  if (options.prometheus_url) {
    const std::string& url = *options.prometheus_url;
    if (!Ready(url, 10)) return Error{url + ": no Prometheus answers /-/ready there"};
    return std::unique_ptr<TsdbSession>(
        std::make_unique<RemoteSession>(url, HttpOptions(options, url + " (given)"), live_state));
  }
  if (live_state && manifest->prometheus_port > 0) {
    // Its Prometheus binds the head node's loopback: reachable here on the
    // head node or through the documented ssh tunnel on the same port.
    const std::string url = fmt::format("http://127.0.0.1:{}", manifest->prometheus_port);
    if (Ready(url, 5)) {
      // 127.0.0.1:<port> may be another Prometheus (another job's, a
      // cluster's, one the manifest's writer pointed at): it is this job's
      // only when it says it serves this job's TSDB, the directory the
      // target resolved to (its owner checked), or the manifest's when that
      // is not visible here (another head node, through the tunnel).
      const std::string served = ServedPath(url);
      if (served.empty() || manifest->tsdb_dir.empty() || served != manifest->tsdb_dir)
        return Error{fmt::format(
            "{} answers but serves {}, not job {}'s TSDB {}: another Prometheus holds that port "
            "here; open the job's tunnel on a free port and pass --prometheus",
            url, served, target.job_id, manifest->tsdb_dir)};
      Progress(options, "job " + target.job_id + " is running: querying its Prometheus at " + url);
      return std::unique_ptr<TsdbSession>(std::make_unique<RemoteSession>(
          url, HttpOptions(options, url + " (the running job's Prometheus)"), true));
    }
    const bool here =
        ShortHostName() == manifest->head_node.substr(0, manifest->head_node.find('.'));
    if (target.tsdb_dir.empty()) {
      std::string how = here ? "" : "; from here, open its tunnel: " + manifest->tunnel_command;
      return Error{fmt::format("job {} is running on {} but its Prometheus ({}) does not answer{}",
                               target.job_id, manifest->head_node, url, how)};
    }
    // Reference "Case A fallback": the immutable blocks, never the WAL.
    Progress(options, url + " does not answer: reading a copy of the live TSDB's blocks");
    return ServeCopy(target.tsdb_dir, true, "a copy of live job " + target.job_id + "'s blocks",
                     options);
  }
  if (!target.tsdb_dir.empty()) {
    auto server = FindLiveServer(target.tsdb_dir);
    if (server) {
      Progress(options, target.tsdb_dir + " is live (" + server->how +
                            "): serving a copy of its blocks, not the TSDB itself");
      return ServeCopy(target.tsdb_dir, true, "a copy of " + target.tsdb_dir + "'s blocks",
                       options);
    }
    return ServeCopy(target.tsdb_dir, false, "a copy of " + target.tsdb_dir, options);
  }
  if (!target.archive_path.empty()) return ServeArchive(target, options);
  return Error{"no TSDB to open: " +
               (target.diag_dir.empty()
                    ? std::string("the target has none")
                    : target.diag_dir + " has no prometheus/ data and no " + "tsdb.tar.zst")};
}

}  // namespace jobmon::diagnose
