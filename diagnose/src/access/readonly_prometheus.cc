#include "access/readonly_prometheus.h"

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

#include "access/archive_unpack.h"
#include "access/cleanup_on_signal.h"
#include "access/orphan_sessions.h"
#include "access/port_scan.h"
#include "access/session_support.h"
#include "access/tsdb_local.h"
#include "access/web_auth.h"
#include "jobmon/common/atomic_file.h"
#include "jobmon/common/daemon.h"
#include "jobmon/common/sha256.h"
#include "jobmon/common/user_file.h"
#include "jobmon/diagnose/prom_http.h"

namespace jobmon::diagnose {

namespace fs = std::filesystem;

namespace {

using Clock = std::chrono::steady_clock;

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
  // Basic auth with a one-time password: loopback is every local user's.
  auto auth = MakeOneTimeCredentials();
  if (!auth) return auth.error();
  auto web_yaml = WebConfigYaml(*auth);
  if (!web_yaml) return web_yaml.error();
  const std::string web_config = temp + "/web.yml";
  if (auto written = WriteFileAtomically(web_config, *web_yaml, 0600); !written)
    return Error{web_config + ": " + written.error().message};
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
                 "--web.config.file=" + web_config,
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
      // Who owns this Prometheus, for the next start after a SIGKILL here.
      if (auto recorded = RecordSession(ws.owned->temp_dir, identity); !recorded)
        Progress(options, "could not record the session: " + recorded.error().message);
    }
    const auto deadline =
        Clock::now() + std::chrono::milliseconds(static_cast<long>(options.start_timeout * 1000));
    auto next_note = Clock::now() + std::chrono::seconds(10);
    bool exited = false;
    while (Clock::now() < deadline) {
      // Ready, and ours: not another server that took the port meanwhile.
      if (Ready(url, 2, *auth) && ServedPath(url, *auth) == data_dir) {
        PromHttpOptions http =
            HttpOptions(options, fmt::format("{} (read-only Prometheus over {})", url, what));
        http.basic_user = auth->user;
        http.basic_password = auth->password;
        auto session =
            std::make_unique<LocalSession>(ws.owned, ws.cleanup, data_dir, url, std::move(http));
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

}  // namespace

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
  // Opened once, no link followed, never waiting on a FIFO; the digest and
  // the unpacking both read this descriptor, so a swap of the path after
  // the check changes nothing.
  auto file = OpenUserFile(archive);
  if (!file) return file.error();
  if (target.manifest && target.manifest->archive && !target.manifest->archive->sha256.empty()) {
    Progress(options, "checking " + archive + " against the manifest's sha256");
    auto digest = Sha256OfFd(file->fd.get());
    if (!digest) return Error{archive + ": " + digest.error().message};
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
  auto result = UnpackArchiveFd(file->fd.get(), archive, unpacked, limits);
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

}  // namespace jobmon::diagnose
