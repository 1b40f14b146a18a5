#pragma once
// Reaching a job's TSDB (tsdb-diagnosis.md, workflow step 2, with its
// safety rules): a running job's Prometheus on the head node's loopback (or
// a URL given, e.g. an ssh tunnel); a finished job's tsdb.tar.zst, checked
// against the manifest's sha256 and unpacked to a private temp dir; a raw
// TSDB directory. A local TSDB is served by a read-only Prometheus on a
// free loopback port found by scanning first (never a port in use, never a
// second instance on a live TSDB, never a lock deleted), stopped and removed
// when the session ends, on every path (error, SIGINT, SIGTERM).

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "jobmon/common/expected.h"
#include "jobmon/common/manifest.h"
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
  std::function<void(std::string_view)> progress;  // one line per long step (stderr)
};

// Job id: the diag dir from the monitor's state or Slurm's StdOut (the
// default diag_dir pattern); a log: its job id and diag dir; a directory:
// a diag dir (manifest.json) or a TSDB (ULID blocks, wal/); a file ending
// .tar.zst: an archive (its manifest beside it, when there).
Expected<ResolvedTarget> ResolveTarget(const std::string& argument);

// An open TSDB. Destroying it stops what it started and removes its temp dir.
class TsdbSession {
 public:
  virtual ~TsdbSession() = default;
  virtual PromSource& source() = 0;
  // The local TSDB directory being served (for block meta.json time ranges);
  // empty for a live job's Prometheus or a URL.
  virtual std::string local_tsdb_dir() const = 0;
  virtual bool live() const = 0;  // a running job's own Prometheus
};

Expected<std::unique_ptr<TsdbSession>> OpenTsdb(const ResolvedTarget& target,
                                                const AccessOptions& options);

}  // namespace jobmon::diagnose
