#pragma once
// Small helpers for the files the prolog and epilog share: pid records,
// degraded notes, ownership.

#include <sys/types.h>

#include <optional>
#include <string>

#include "jobmon/common/daemon.h"
#include "jobmon/common/expected.h"

namespace jobmon::spank {

// mkdir -p with `mode`, then chown of the last component when given.
Expected<void> MakeDirectory(const std::string& path, mode_t mode, std::optional<uid_t> owner = {},
                             std::optional<gid_t> group = {});

Expected<void> WriteOwnedFile(const std::string& path, const std::string& text, uid_t owner,
                              gid_t group);

std::optional<ProcessIdentity> ReadPidRecord(const std::string& path);
std::string ReadText(const std::string& path);

// Appends one line to a notes file (degraded reasons), creating it.
void AppendLine(const std::string& path, const std::string& line);

}  // namespace jobmon::spank
