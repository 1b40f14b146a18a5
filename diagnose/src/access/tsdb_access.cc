// OpenTsdb: a job's live Prometheus, a URL, or a read-only Prometheus we
// start over a copy of a TSDB or an unpacked archive (tsdb_access.h).
#include "jobmon/diagnose/tsdb_access.h"

#include <fmt/format.h>
#include <pwd.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <deque>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <set>
#include <thread>

#include "jobmon/common/daemon.h"
#include "jobmon/common/sha256.h"
#include "jobmon/diagnose/archive_unpack.h"
#include "jobmon/diagnose/cleanup_on_signal.h"
#include "jobmon/diagnose/port_scan.h"
#include "jobmon/diagnose/prom_http.h"
#include "jobmon/diagnose/prom_json.h"
#include "jobmon/diagnose/tsdb_local.h"

namespace jobmon::diagnose {

namespace fs = std::filesystem;

namespace {

using Clock = std::chrono::steady_clock;

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

// /-/ready answers 200 once the TSDB is loaded (the WAL replayed).
bool Ready(const std::string& url, double timeout_seconds) {
  PromHttpOptions options;
  options.timeout_seconds = timeout_seconds;
  options.connect_timeout_seconds = timeout_seconds;
  options.max_body = 4096;
  return PromHttpSource(url, options).Get("/-/ready").ok();
}

// The TSDB a Prometheus serves (its --storage.tsdb.path); empty if unknown.
std::string ServedPath(const std::string& url) {
  PromHttpOptions options;
  options.timeout_seconds = 5;
  options.max_body = 1 << 20;
  auto flags = PromHttpSource(url, options).Get("/api/v1/status/flags");
  if (!flags) return {};
  auto path = ParseStatusFlag(*flags, "storage.tsdb.path");
  return path && *path ? **path : std::string();
}

std::optional<MsRange> HeadRange(const PromHttpSource& source) {
  auto body = source.Get("/api/v1/status/tsdb");
  if (!body) return std::nullopt;
  auto range = ParseTsdbHeadRange(*body);
  return range ? *range : std::nullopt;
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

std::string ShortHostName() {
  char name[256] = {};
  if (gethostname(name, sizeof(name) - 1) != 0) return {};
  std::string out = name;
  return out.substr(0, out.find('.'));
}

std::string LogTail(const std::string& path, size_t lines) {
  std::ifstream in(path);
  std::deque<std::string> tail;
  std::string line;
  while (std::getline(in, line)) {
    tail.push_back(line);
    if (tail.size() > lines) tail.pop_front();
  }
  std::string out;
  for (const auto& l : tail) out += "\n  " + l;
  return out;
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

// What the signal thread and the destructor both clean, under its mutex.
struct Owned {
  std::mutex mutex;
  std::string temp_dir;
  std::optional<ProcessIdentity> prometheus;

  void Clean() {
    std::lock_guard lock(mutex);
    if (prometheus) {
      StopDaemon(*prometheus, std::chrono::seconds(10));
      prometheus.reset();
    }
    if (!temp_dir.empty()) {
      std::error_code ec;
      fs::remove_all(temp_dir, ec);
      temp_dir.clear();
    }
  }
};

// A read-only Prometheus we started over a TSDB in our temp dir.
class LocalSession : public TsdbSession {
 public:
  LocalSession(std::shared_ptr<Owned> owned, CleanupId cleanup, std::string data_dir,
               std::string url, PromHttpOptions options)
      : owned_(std::move(owned)),
        cleanup_(cleanup),
        data_dir_(std::move(data_dir)),
        source_(std::move(url), std::move(options)) {}
  ~LocalSession() override { RunCleanup(cleanup_); }
  PromSource& source() override { return source_; }
  std::string local_tsdb_dir() const override { return data_dir_; }
  bool live() const override { return false; }
  Expected<std::optional<TimeRange>> DataRange() override { return RangeOf(data_dir_, source_); }
  std::string url() const override { return source_.base_url(); }

 private:
  std::shared_ptr<Owned> owned_;
  CleanupId cleanup_;
  std::string data_dir_;
  PromHttpSource source_;
};

// A temp dir registered for cleanup from the moment it exists.
struct Workspace {
  std::shared_ptr<Owned> owned = std::make_shared<Owned>();
  CleanupId cleanup = 0;
  bool handed_over = false;
  ~Workspace() {
    if (!handed_over && cleanup) RunCleanup(cleanup);
  }
};

Expected<void> MakeWorkspace(const AccessOptions& options, Workspace& ws) {
  if (options.cleanup_on_signal) InstallCleanupOnSignal();
  std::string parent = options.temp_parent;
  if (parent.empty()) {
    const char* tmp = getenv("TMPDIR");
    parent = tmp && *tmp ? tmp : "/tmp";
  }
  // Registered before the directory exists: a signal at any point after
  // mkdtemp finds it.
  auto owned = ws.owned;
  ws.cleanup = RegisterCleanup([owned] { owned->Clean(); });
  std::string pattern = parent + "/jobmon-diagnose-XXXXXX";
  std::lock_guard lock(ws.owned->mutex);
  // mkdtemp: a new directory, mode 0700, ours.
  if (!mkdtemp(pattern.data())) return Error{parent + ": mkdtemp: " + std::strerror(errno)};
  ws.owned->temp_dir = pattern;
  return {};
}

// The TSDB root in an unpacked archive: the directory itself, or its one
// subdirectory ("prometheus/", as spank/archive packs it).
std::string TsdbRootIn(const std::string& dir) {
  auto here = InspectTsdb(dir);
  if (here && !here->empty()) return dir;
  std::error_code ec;
  std::vector<fs::path> subdirs;
  for (const auto& entry : fs::directory_iterator(dir, ec))
    if (entry.is_directory(ec) && !entry.is_symlink(ec)) subdirs.push_back(entry.path());
  return subdirs.size() == 1 ? subdirs[0].string() : dir;
}

Expected<void> ChownTree(const std::string& dir, uid_t uid, gid_t gid) {
  if (lchown(dir.c_str(), uid, gid) != 0) return Error{dir + ": chown: " + std::strerror(errno)};
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(dir, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (lchown(it->path().c_str(), uid, gid) != 0)
      return Error{it->path().string() + ": chown: " + std::strerror(errno)};
  }
  if (ec) return Error{dir + ": " + ec.message()};
  return {};
}

// Starts the read-only instance over ws's `data_dir` and waits for it.
Expected<std::unique_ptr<TsdbSession>> Serve(Workspace& ws, const std::string& data_dir,
                                             const std::string& what,
                                             const AccessOptions& options) {
  auto tsdb = InspectTsdb(data_dir);
  if (!tsdb) return tsdb.error();
  if (tsdb->empty()) return Error{what + ": no TSDB blocks and no WAL to serve"};
  const std::string temp = fs::path(data_dir).parent_path().string();
  const std::string config = temp + "/empty.yml";  // nothing to scrape
  std::ofstream(config).close();
  const std::string log = temp + "/prometheus.log";

  DaemonSpec spec;
  spec.log_path = log;
  spec.working_dir = temp;
  spec.env = std::vector<std::string>{"PATH=/usr/sbin:/usr/bin:/sbin:/bin"};
  if (geteuid() == 0) {
    // Root needs no Prometheus of its own: it runs as nobody over our copy.
    struct passwd* nobody = getpwnam("nobody");
    if (!nobody) return Error{"running as root, and there is no user nobody to run Prometheus as"};
    auto chowned = ChownTree(temp, nobody->pw_uid, nobody->pw_gid);
    if (!chowned) return chowned.error();
    spec.uid = nobody->pw_uid;
    spec.gid = nobody->pw_gid;
  }

  std::set<int> skip;
  std::error_code ec;
  for (int attempt = 0; attempt < 3; ++attempt) {
    auto port = FindFreeLoopbackPort(options.first_port, options.port_tries, skip);
    if (!port) return port.error();
    const std::string url = fmt::format("http://127.0.0.1:{}", *port);
    spec.argv = {options.prometheus_binary, "--storage.tsdb.path=" + data_dir,
                 fmt::format("--web.listen-address=127.0.0.1:{}", *port), "--config.file=" + config,
                 // Blocks of any age stay queryable (no retention deletes).
                 "--storage.tsdb.retention.time=100y"};
    Progress(options, fmt::format("starting a read-only Prometheus on {} over {}", url, what));
    fs::remove(log, ec);  // a retry's log tells only its own story
    ProcessIdentity identity;
    {
      std::lock_guard lock(ws.owned->mutex);  // the signal thread sees it at once
      auto spawned = SpawnDaemon(spec);
      if (!spawned) return Error{options.prometheus_binary + ": " + spawned.error().message};
      identity = *spawned;
      ws.owned->prometheus = identity;
    }
    const auto deadline =
        Clock::now() + std::chrono::milliseconds(static_cast<long>(options.start_timeout * 1000));
    auto next_note = Clock::now() + std::chrono::seconds(10);
    bool exited = false;
    while (Clock::now() < deadline) {
      // Ready, and ours: not another server that took the port meanwhile.
      if (Ready(url, 2) && ServedPath(url) == data_dir) {
        auto session = std::make_unique<LocalSession>(
            ws.owned, ws.cleanup, data_dir, url,
            HttpOptions(options, fmt::format("{} (read-only Prometheus over {})", url, what)));
        ws.handed_over = true;
        return std::unique_ptr<TsdbSession>(std::move(session));
      }
      if (!IsSameProcessRunning(identity)) {
        exited = true;
        break;
      }
      if (Clock::now() > next_note) {
        Progress(options, "still waiting for Prometheus (a long WAL replays slowly)");
        next_note = Clock::now() + std::chrono::seconds(10);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    {
      std::lock_guard lock(ws.owned->mutex);
      StopDaemon(identity, std::chrono::seconds(10));
      ws.owned->prometheus.reset();
    }
    const std::string tail = LogTail(log, 8);
    // Another process took the port between our scan and its bind: next one.
    if (exited && tail.find("address already in use") != std::string::npos) {
      skip.insert(*port);
      continue;
    }
    // The temp dir and the log in it go with the workspace: the tail is kept.
    return Error{fmt::format("{} {} on {} over {}; the end of its log:{}",
                             options.prometheus_binary, exited ? "exited" : "did not become ready",
                             url, what, tail)};
  }
  return Error{"Prometheus lost its port three times; giving up"};
}

Expected<std::unique_ptr<TsdbSession>> ServeCopy(const std::string& dir, bool blocks_only,
                                                 const std::string& what,
                                                 const AccessOptions& options) {
  Workspace ws;
  auto made = MakeWorkspace(options, ws);
  if (!made) return made.error();
  const std::string data = ws.owned->temp_dir + "/data";
  Progress(options, fmt::format("copying {}{} to {}", dir,
                                blocks_only ? " (blocks only: it is live)" : "", data));
  // Hard links would let a chown for nobody change the originals.
  auto copied = CopyTsdbForServing(dir, data, blocks_only, geteuid() != 0);
  if (!copied) return copied.error();
  auto copy = InspectTsdb(data);
  if (!copy) return copy.error();
  if (blocks_only && copy->blocks.empty())
    return Error{what +
                 " is live and has no compacted blocks yet (its data is all in the WAL, "
                 "which only its own Prometheus may read): reach that Prometheus instead"};
  return Serve(ws, data, what, options);
}

Expected<std::unique_ptr<TsdbSession>> ServeArchive(const ResolvedTarget& target,
                                                    const AccessOptions& options) {
  const std::string& archive = target.archive_path;
  if (target.manifest && target.manifest->archive && !target.manifest->archive->sha256.empty()) {
    Progress(options, "checking " + archive + " against the manifest's sha256");
    auto digest = Sha256OfFile(archive);
    if (!digest) return digest.error();
    if (*digest != target.manifest->archive->sha256)
      return Error{fmt::format("{}: sha256 {} differs from the manifest's {}: refused", archive,
                               *digest, target.manifest->archive->sha256)};
  } else {
    Progress(options, archive + ": no sha256 in a manifest to check it against");
  }
  Workspace ws;
  auto made = MakeWorkspace(options, ws);
  if (!made) return made.error();
  const std::string unpacked = ws.owned->temp_dir + "/data";
  if (mkdir(unpacked.c_str(), 0700) != 0) return Error{unpacked + ": " + std::strerror(errno)};
  Progress(options, "unpacking " + archive + " to " + unpacked);
  UnpackLimits limits;
  limits.max_bytes = options.max_unpacked_bytes;
  auto result = UnpackArchive(archive, unpacked, limits);
  if (!result) return result.error();
  std::string root = TsdbRootIn(unpacked);
  if (root != unpacked) {
    // Serve "<temp>/data" itself: Serve puts its config and log beside it.
    const std::string moved = ws.owned->temp_dir + "/tsdb";
    std::error_code ec;
    fs::rename(root, moved, ec);
    if (!ec) fs::remove_all(unpacked, ec);
    if (!ec) fs::rename(moved, unpacked, ec);
    if (ec) return Error{unpacked + ": " + ec.message()};
  }
  return Serve(ws, unpacked, "archive " + archive, options);
}

bool LiveState(const std::string& state) { return state == "starting" || state == "running"; }

}  // namespace

Expected<std::optional<TimeRange>> TsdbSession::DataRange() {
  const std::string dir = local_tsdb_dir();
  if (dir.empty()) return std::optional<TimeRange>();
  return LocalTsdbRange(dir);
}

Expected<void> CopyTsdbForServing(const std::string& from, const std::string& to, bool blocks_only,
                                  bool link_blocks) {
  std::error_code ec;
  if (!fs::is_directory(from, ec)) return Error{from + ": not a directory"};
  if (mkdir(to.c_str(), 0700) != 0) return Error{to + ": " + std::strerror(errno)};
  for (const auto& top : fs::directory_iterator(from, ec)) {
    const std::string name = top.path().filename().string();
    const bool block = IsBlockDirName(name);
    const bool head = name == "wal" || name == "chunks_head";
    if (top.is_symlink(ec) || !top.is_directory(ec)) continue;  // lock, queries.active, ...
    if (!block && (blocks_only || !head)) continue;
    const fs::path target = fs::path(to) / name;
    fs::create_directory(target, ec);
    if (ec) return Error{target.string() + ": " + ec.message()};
    for (auto it = fs::recursive_directory_iterator(top.path(), ec);
         !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
      const fs::path out = target / it->path().lexically_relative(top.path());
      // symlink_status: a link is never followed, whatever it points at.
      const auto type = it->symlink_status(ec).type();
      if (ec) return Error{it->path().string() + ": " + ec.message()};
      if (type == fs::file_type::directory) {
        fs::create_directory(out, ec);
        if (ec) return Error{out.string() + ": " + ec.message()};
        continue;
      }
      if (type != fs::file_type::regular) continue;
      if (block && link_blocks) {
        fs::create_hard_link(it->path(), out, ec);
        if (!ec) continue;
        ec.clear();  // another filesystem: copy
      }
      fs::copy_file(it->path(), out, ec);
      if (ec) return Error{it->path().string() + ": " + ec.message()};
    }
    if (ec) return Error{top.path().string() + ": " + ec.message()};
  }
  if (ec) return Error{from + ": " + ec.message()};
  return {};
}

Expected<std::unique_ptr<TsdbSession>> OpenTsdb(const ResolvedTarget& target,
                                                const AccessOptions& options) {
  const std::optional<Manifest>& manifest = target.manifest;
  const bool live_state = manifest && LiveState(manifest->state);
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
      // cluster's): it is this job's only when it serves this job's TSDB.
      const std::string served = ServedPath(url);
      if (!served.empty() && !manifest->tsdb_dir.empty() && served != manifest->tsdb_dir)
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
