#pragma once
// Small helpers for the files the prolog and epilog share: pid records,
// degraded notes, ownership.

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

#include "jobmon/common/daemon.h"
#include "jobmon/common/diag_dir.h"
#include "jobmon/common/expected.h"
#include "jobmon/common/user_file.h"
#include "lifecycle/diag_paths.h"
#include "lifecycle/job_env.h"

namespace jobmon::spank {

// mkdir -p with `mode`; the directory must end up writable by the caller.
// In the diag dir, call these under FsIdentity(job user): files and
// directories are then the user's without any chown by root.
Expected<void> MakeDirectory(const std::string& path, mode_t mode);

// Files of the root-owned run dir: root's own, yet read without following a
// symlink, without blocking and capped, like everything else ("" if absent).
std::optional<ProcessIdentity> ReadPidRecord(const std::string& path);
std::string ReadText(const std::string& path);

// Appends one line to a notes file (degraded reasons), creating it; never
// through a symlink, never into a FIFO or device.
void AppendLine(const std::string& path, const std::string& line);

// Makes `path` (its parent root-owned, so nobody else can race us) a 0700
// directory owned by uid:gid, for a daemon that runs as that user.
Expected<void> MakeDirectoryFor(const std::string& path, uid_t uid, gid_t gid);

// What the job's supervisor reported ("" when nothing): read as the owner of
// the supervisor dir, who controls the file.
std::string ReadExporterStatus(const lifecycle::RunDir& run);

// Removes the run dir; what the supervisor's user could put in its subdir
// is removed with that user's rights only.
void RemoveRunDir(const lifecycle::RunDir& run);

// The environment of every daemon the plugin starts (nothing of slurmd's).
const std::vector<std::string>& DaemonEnvironment();

// The job's group: SLURM_JOB_GID, else the user's primary group.
gid_t JobGroup(const lifecycle::JobEnv& job);

// The first line of a small run-dir file, without its newline ("" if absent).
std::string ReadFirstLine(const std::string& path);

// The non-empty lines of a text.
std::vector<std::string> NonEmptyLines(const std::string& text);

// Degraded notes: one file per node in the diag dir's logs/, so the head
// node (and the job's [diag] line) can see every node's. The user controls
// that directory: read as `user`, each file capped, and at most so many
// files and lines (they go into the manifest). A file refused by the opener
// becomes a note saying so.
inline constexpr size_t kMaxNoteFileBytes = 64 << 10;
inline constexpr size_t kMaxNoteFiles = 512;
inline constexpr size_t kMaxNotes = 256;
inline constexpr size_t kMaxNoteLineBytes = 1024;
std::string DegradedNotesPath(const DiagLayout& layout, const std::string& node);
struct NodeNote {
  std::string node;
  std::string line;
};
std::vector<NodeNote> ReadDegradedNotes(const DiagLayout& layout, const JobUser& user);

}  // namespace jobmon::spank
