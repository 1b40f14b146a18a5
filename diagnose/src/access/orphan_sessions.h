#pragma once
// Read-only Prometheus instances whose owner died. Each session's private
// temp dir (jobmon-diagnose-XXXXXX, readonly_prometheus.cc) records who
// owns it and which Prometheus serves it; a `jobmon diagnose` killed by
// SIGKILL (or with its daemon) leaves that Prometheus running, detached.
// At the next start, the daemon and `jobmon diagnose` stop such orphans: by
// pid and start time, only while the process still serves that very dir
// (its --storage.tsdb.path) and belongs to the dir's owner, so a planted
// record cannot make root signal anyone else's process.

#include <string>
#include <vector>

#include "jobmon/common/daemon.h"
#include "jobmon/common/expected.h"

namespace jobmon::diagnose {

// Writes `temp_dir`/session: this process as the owner, and `prometheus`.
Expected<void> RecordSession(const std::string& temp_dir, const ProcessIdentity& prometheus);

// What one session record says; pure.
struct SessionRecord {
  ProcessIdentity owner, prometheus;
};
Expected<SessionRecord> ParseSessionRecord(const std::string& text);

// Scans `parent` (TMPDIR or /tmp) for session dirs whose owner is gone and
// stops their Prometheus; removes the dirs this process owns. One line per
// orphan handled, for the log.
std::vector<std::string> StopOrphanedSessionsIn(const std::string& parent,
                                                const std::string& procfs = "/proc");

}  // namespace jobmon::diagnose
