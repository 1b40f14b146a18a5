#pragma once
// A TSDB directory on this machine: what it holds (ULID blocks, wal/), the
// time range its blocks cover, and whether a live Prometheus serves it (then
// it must not be served a second time: docs/diagnose.md, step 2,
// "never delete a TSDB lock file ... never ... a second instance").

#include <sys/types.h>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "jobmon/common/expected.h"
#include "jobmon/diagnose/prom_json.h"

namespace jobmon::diagnose {

// 26 characters of Crockford's base32, as Prometheus names its blocks.
bool IsBlockDirName(std::string_view name);

struct LocalTsdb {
  std::vector<BlockMeta> blocks;  // sorted by minTime
  bool has_wal = false;           // wal/ with at least one segment
  bool has_lock = false;          // a lock file (held or stale)
  bool empty() const { return blocks.empty() && !has_wal; }
};

// Reads the blocks' meta.json (a block without one, e.g. a compaction's
// leftover, is skipped). Fails when `dir` is not a directory.
Expected<LocalTsdb> InspectTsdb(const std::string& dir);

// The union of the blocks' ranges; nullopt when there are no blocks. When
// only wal/ exists the range is not on disk in a readable form: the
// read-only Prometheus replays the WAL into its head, and
// TsdbSession::DataRange asks it (/api/v1/status/tsdb headStats).
std::optional<MsRange> BlocksRange(const LocalTsdb& tsdb);
Expected<std::optional<TimeRange>> LocalTsdbRange(const std::string& dir);

// Widens `into` by `other` (either may be absent).
std::optional<MsRange> Union(std::optional<MsRange> into, const std::optional<MsRange>& other);

// Which process serves `dir`: the holder of its lock file (Prometheus takes
// an exclusive flock when its lock file is on) or, since Debian's
// Prometheus runs without one by default, a process whose command line has
// --storage.tsdb.path=<dir> (compared after resolving symlinks). nullopt:
// none found. Never takes the lock itself for longer than the test.
struct LiveServer {
  pid_t pid = 0;  // 0: the lock is held, its holder unknown
  std::string how;
};
std::optional<LiveServer> FindLiveServer(const std::string& dir,
                                         const std::string& procfs = "/proc");

// For FindLiveServer: the --storage.tsdb.path value of a NUL-separated
// /proc/<pid>/cmdline, when its program is a prometheus.
std::optional<std::string> TsdbPathOfCmdline(std::string_view cmdline);

// Copies a TSDB for serving: blocks always; wal/ and chunks_head/ unless
// `blocks_only` (a live TSDB: reference "Case A fallback"); never lock or
// queries.active; symlinks skipped. Block files are hard links when
// `link_blocks` (they are immutable; Prometheus replaces, never rewrites).
Expected<void> CopyTsdbForServing(const std::string& from, const std::string& to, bool blocks_only,
                                  bool link_blocks);

}  // namespace jobmon::diagnose
