#pragma once
// Starting a detached daemon and stopping exactly that process later.
// A pid alone is not an identity: pids are reused. A process is ours only
// while /proc/<pid>/stat still shows the start time recorded at spawn and
// /proc/<pid>/cmdline the argv we started it with.

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "jobmon/common/expected.h"
#include "jobmon/common/proc_stat.h"
#include "jobmon/common/unique_fd.h"
#include "jobmon/common/user_file.h"

namespace jobmon {

struct ProcessIdentity {
  pid_t pid = 0;
  uint64_t start_time = 0;  // /proc/<pid>/stat field 22
  std::string cmdline;      // as /proc/<pid>/cmdline: argv joined by NULs; empty: not checked
};

struct DaemonSpec {
  std::vector<std::string> argv;                // argv[0] is the program path (no PATH search)
  std::optional<std::vector<std::string>> env;  // "K=V" entries; nullopt inherits ours
  std::string log_path;                         // stdout+stderr, appended; empty: /dev/null
  std::string working_dir = "/";
  std::optional<uid_t> uid;  // drop to this uid (and gid) before exec; needs root
  std::optional<gid_t> gid;
  // An open log for stdout+stderr, used instead of log_path (which is
  // opened after the privilege drop, as the daemon's user). The caller keeps
  // it and closes it after SpawnDaemon; the daemon gets its own copy.
  int log_fd = -1;
  // One descriptor the daemon inherits under the same number (e.g. the
  // prolog's /dev/kmsg for the exporter, --kmsg-fd N): kept open across the
  // privilege drop and the exec, close-on-exec cleared in the daemon only.
  // Must be >= 3 (0-2 become stdin/stdout/stderr); -1: none.
  int inherit_fd = -1;
};

// Opens (creates) a daemon's log in a directory that `owner` controls, the
// way a log for a daemon of another user must be opened there: under the
// owner's filesystem identity (when root), never through a symlink, never
// blocking on a FIFO, and only a regular file owned by `owner` (no hard
// link to somebody else's file). For DaemonSpec::log_fd.
Expected<UniqueFd> OpenDaemonLog(const std::string& path, const JobUser& owner);

// Double fork + setsid (no controlling terminal, not our child, not a
// session leader), stdin from /dev/null, all other fds closed (but
// DaemonSpec::inherit_fd), signal mask
// and dispositions reset, oom_score_adj reset to 0 (slurmd runs at -1000
// and children inherit it), privileges dropped, then exec. Returns once the
// exec succeeded, or the failing step with its errno.
Expected<ProcessIdentity> SpawnDaemon(const DaemonSpec& spec);

enum class StopOutcome {
  kNotRunning,  // already gone (or a zombie)
  kNotOurs,     // the pid now belongs to another process: left alone
  kTerminated,  // exited after SIGTERM
  kKilled,      // needed SIGKILL
};
const char* ToString(StopOutcome outcome);

// SIGTERM, wait up to `grace`, then SIGKILL — only if the pid still is the
// recorded process. An error means the process survived SIGKILL (D state).
Expected<StopOutcome> StopDaemon(const ProcessIdentity& identity, std::chrono::milliseconds grace,
                                 const std::string& procfs = "/proc");

// Reads the identity of a running process (for records made elsewhere).
Expected<ProcessIdentity> ReadProcessIdentity(pid_t pid, const std::string& procfs = "/proc");

// True while the recorded process is alive (not a zombie) and still the same.
bool IsSameProcessRunning(const ProcessIdentity& identity, const std::string& procfs = "/proc");

// One-line text form for pid files: "<pid> <start_time>".
std::string FormatPidRecord(const ProcessIdentity& identity);
std::optional<ProcessIdentity> ParsePidRecord(std::string_view text);

}  // namespace jobmon
