#pragma once
// Unpacking a job's tsdb.tar.zst (spank/archive packs it) into a private
// temp dir for a read-only Prometheus. The archive sits in a directory the
// job's user controls, so every entry is checked: only regular files and
// directories, relative paths without "..", no links of any kind, no device
// files, FIFOs or sockets, and a cap on the total size and entry count.

#include <cstdint>
#include <string>

#include "jobmon/common/expected.h"

namespace jobmon::diagnose {

struct UnpackLimits {
  uint64_t max_bytes = uint64_t{64} << 30;  // unpacked, all files together
  uint64_t max_entries = 1'000'000;
};

struct UnpackResult {
  uint64_t files = 0;
  uint64_t bytes = 0;
};

// Unpacks into `dest` (an existing, empty directory we own). Files are
// created 0600, directories 0700, never through an existing path. On
// error `dest` may hold part of the archive: the caller removes it.
Expected<UnpackResult> UnpackArchive(const std::string& archive_path, const std::string& dest,
                                     const UnpackLimits& limits = {});

// The checks on one entry's path, apart from reading: the relative path
// to create, or why it is refused.
Expected<std::string> SafeEntryPath(const std::string& entry_path);

}  // namespace jobmon::diagnose
