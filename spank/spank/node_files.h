#pragma once
// Small helpers for the files the prolog and epilog share: pid records,
// degraded notes, ownership.

#include <sys/types.h>

#include <optional>
#include <string>

#include "jobmon/common/daemon.h"
#include "jobmon/common/expected.h"

namespace jobmon::spank {

// mkdir -p with `mode`; the directory must end up writable by the caller.
// In the diag dir, call these under FsIdentity(job user): files and
// directories are then the user's without any chown by root.
Expected<void> MakeDirectory(const std::string& path, mode_t mode);

std::optional<ProcessIdentity> ReadPidRecord(const std::string& path);
std::string ReadText(const std::string& path);

// Appends one line to a notes file (degraded reasons), creating it.
void AppendLine(const std::string& path, const std::string& line);

}  // namespace jobmon::spank
