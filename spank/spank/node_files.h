#pragma once
// Small helpers for the files the prolog and epilog share: pid records,
// degraded notes, ownership.

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

#include "jobmon/common/daemon.h"
#include "jobmon/common/expected.h"
#include "lifecycle/diag_paths.h"
#include "lifecycle/job_env.h"

namespace jobmon::spank {

// mkdir -p with `mode`; the directory must end up writable by the caller.
// In the diag dir, call these under FsIdentity(job user): files and
// directories are then the user's without any chown by root.
Expected<void> MakeDirectory(const std::string& path, mode_t mode);

std::optional<ProcessIdentity> ReadPidRecord(const std::string& path);
std::string ReadText(const std::string& path);

// Appends one line to a notes file (degraded reasons), creating it.
void AppendLine(const std::string& path, const std::string& line);

// The environment of every daemon the plugin starts (nothing of slurmd's).
const std::vector<std::string>& DaemonEnvironment();

// The job's group: SLURM_JOB_GID, else the user's primary group.
gid_t JobGroup(const lifecycle::JobEnv& job);

// The first line of a small file, without its newline ("" if absent).
std::string ReadFirstLine(const std::string& path);

// The non-empty lines of a text.
std::vector<std::string> NonEmptyLines(const std::string& text);

// Degraded notes: one file per node in the diag dir's logs/, so the head
// node (and the job's [diag] line) can see every node's.
std::string DegradedNotesPath(const lifecycle::DiagLayout& layout, const std::string& node);
struct NodeNote {
  std::string node;
  std::string line;
};
std::vector<NodeNote> ReadDegradedNotes(const lifecycle::DiagLayout& layout);

}  // namespace jobmon::spank
