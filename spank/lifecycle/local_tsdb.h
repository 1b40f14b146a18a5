#pragma once
// The job's live TSDB on the head node's local disk (plugin argument
// tsdb_dir): Prometheus does not support NFS-like filesystems, so the TSDB
// is written locally and only its archive goes to the shared diag dir.
//
// Root makes the path: every directory above the TSDB must be root's and
// writable by nobody else (or sticky), each opened without following a
// symlink, so that no user can occupy or redirect it; the TSDB directory
// itself is 0700 and belongs to the user Prometheus runs as.

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <string>

#include "jobmon/common/diag_dir.h"
#include "jobmon/common/expected.h"
#include "lifecycle/job_env.h"
#include "lifecycle/plugin_config.h"

namespace jobmon::lifecycle {

// tsdb_dir with %n node, %j job id, %u user, %d diag dir expanded; absolute,
// no "." or ".." component.
Expected<std::string> TsdbDirFor(const PluginConfig& config, const DiagLayout& layout,
                                 const JobEnv& job);

// True when `path` is the diag dir or inside it (today's layout, which an
// operator without local disk may choose with tsdb_dir=%d/prometheus).
bool IsInside(const std::string& path, const std::string& dir);

// Pure: whether a directory on the way to the TSDB can be trusted: owned by
// root, and writable by group or others only with the sticky bit (/tmp,
// /var/tmp), where a name someone else made is then refused one level down.
Expected<void> CheckTrustedParent(const std::string& path, uid_t owner, mode_t mode);

// Makes `path` (its parents 0755 root as needed, each checked) a fresh 0700
// directory owned by uid:gid. One left by an earlier job with the same id
// (a crash before its archive) is moved aside to <path>.stale-<time>, not
// reused. Refused when the filesystem has less than min_free_mb free.
struct LocalTsdb {
  std::string path;
  std::string moved_aside;  // the stale directory's new name, if any
  uint64_t free_mb = 0;
};
Expected<LocalTsdb> PrepareLocalTsdb(const std::string& path, uid_t uid, gid_t gid,
                                     uint64_t min_free_mb);

// In `parent`, removes the empty directories named by a job id for which
// `is_live(id)` is false: the TSDB dirs that an archiver which outlived its
// epilog emptied but could not remove (their parent is root's).
void SweepEmptyTsdbDirs(const std::string& parent, const std::function<bool(uint32_t)>& is_live);

// Removes the directory `path` and everything under it without following a
// symlink anywhere (each level opened with O_NOFOLLOW relative to its
// parent; a symlink is unlinked, never entered). Run as the TSDB's owner.
Expected<void> RemoveTreeNoFollow(const std::string& path);

}  // namespace jobmon::lifecycle
