#pragma once
// Reaching a job's TSDB (docs/diagnose.md, workflow step 2, with its
// safety rules): a running job's Prometheus on the head node's loopback (or
// a URL given, e.g. an ssh tunnel); a finished job's tsdb.tar.zst, checked
// against the manifest's sha256 and unpacked to a private temp dir; a raw
// TSDB directory. A local TSDB is served by a read-only Prometheus on a
// free loopback port found by scanning first (never a port in use, never a
// second instance on a live TSDB, never a lock deleted), stopped and removed
// when the session ends, on every path (error, SIGINT, SIGTERM).

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "jobmon/common/expected.h"
#include "jobmon/common/manifest.h"
#include "jobmon/common/user_file.h"
#include "jobmon/diagnose/prom_source.h"

namespace jobmon::diagnose {

enum class TargetKind { kJobId, kLog, kDiagDir, kArchive, kTsdbDir };

// What `jobmon diagnose <job-id|log|diag-dir|archive|tsdb-dir>` names.
struct ResolvedTarget {
  TargetKind kind = TargetKind::kDiagDir;
  std::string job_id;        // when known
  std::string diag_dir;      // when known
  std::string log_path;      // the job's log, for triage (when found)
  std::string archive_path;  // tsdb.tar.zst (when it exists)
  std::string tsdb_dir;      // a raw TSDB directory (when given or kept)
  std::optional<Manifest> manifest;
};

struct AccessOptions {
  std::optional<std::string> prometheus_url;  // --prometheus: query this, start nothing
  std::string prometheus_binary = "/usr/bin/prometheus";
  int first_port = 9190;  // read-only instances: first free port from here
  int port_tries = 100;
  std::string temp_parent;     // private temp dirs go here (default $TMPDIR or /tmp)
  double start_timeout = 120;  // seconds to wait for a read-only Prometheus to answer
  std::function<void(std::string_view)> progress;    // one line per long step (stderr)
  double query_timeout = 120;                        // one API request
  size_t max_response_bytes = size_t{256} << 20;     // one API answer
  uint64_t max_unpacked_bytes = uint64_t{64} << 30;  // an archive, unpacked
  // SIGINT/SIGTERM/SIGHUP stop what a session started and exit 130/143/129
  // (cleanup_on_signal.h): right for the CLI; a daemon with its own signal
  // handling (the monitor) sets false and destroys its sessions itself.
  bool cleanup_on_signal = true;
  // The job has ended (the monitor's end-of-job run): its live Prometheus
  // is never queried, whatever state its manifest, which its user writes,
  // claims.
  bool job_ended = false;
};

// Job id: the diag dir from the monitor's state or Slurm's StdOut (the
// default diag_dir pattern); a log: its job id and diag dir; a directory:
// a diag dir (manifest.json) or a TSDB (ULID blocks, wal/); a file ending
// .tar.zst: an archive (its manifest beside it, when there).
Expected<ResolvedTarget> ResolveTarget(const std::string& argument);

// Whose files a target's are, for root to read them as that user only
// (`jobmon diagnose` run as root becomes that user before it reads any):
// a job id's user as Slurm lists it, else the owner of the path named (a
// link's own owner: a user's link to root's files is still the user's).
// An error when neither is known.
Expected<JobUser> TargetUser(const std::string& argument);

// An open TSDB. Destroying it stops what it started and removes its temp dir.
class TsdbSession {
 public:
  virtual ~TsdbSession() = default;
  virtual PromSource& source() = 0;
  // The local TSDB directory being served (for block meta.json time ranges);
  // empty for a live job's Prometheus or a URL.
  virtual std::string local_tsdb_dir() const = 0;
  virtual bool live() const = 0;  // a running job's own Prometheus
  // The time range the TSDB holds: its blocks' meta.json and, where the
  // session can ask, the head (/api/v1/status/tsdb headStats: the WAL a
  // read-only instance replayed, a live instance's recent data). nullopt:
  // no data. This base version reads only local_tsdb_dir()'s blocks.
  virtual Expected<std::optional<TimeRange>> DataRange();
  // Where the session is (a URL); empty when it has none.
  virtual std::string url() const { return {}; }
};

Expected<std::unique_ptr<TsdbSession>> OpenTsdb(const ResolvedTarget& target,
                                                const AccessOptions& options);

// Parts of the above, for tests.
// A log's job id: SLURM_JOB_ID=<id> in its first lines (within its first
// kJobIdHeadBytes), else the last run of digits in its file name
// ("slurm-1234.out").
inline constexpr size_t kJobIdHeadBytes = size_t{1} << 20;
std::optional<std::string> JobIdOfLog(const std::string& log_path);

// Stops the read-only Prometheus of sessions whose owner died (a `jobmon
// diagnose` killed by SIGKILL) under `temp_parent` ("" : $TMPDIR or /tmp);
// one line per orphan handled (src/access/orphan_sessions.h says how it is
// kept from signalling anyone else's process).
std::vector<std::string> StopOrphanedSessions(const std::string& temp_parent = "");
// The diag dir the default pattern (%o/jobmon-diag-%j) gives a job whose
// stdout is `stdout_path`.
std::string DefaultDiagDirBeside(const std::string& stdout_path, const std::string& job_id);

}  // namespace jobmon::diagnose
