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
  // At most this many bytes unpacked per byte of archive (with the floor
  // below, for small archives): a TSDB's chunks are compressed already, so
  // zstd gains a few times on them, while a bomb gains thousands (67 KB to
  // 2 GiB). 0: no ratio cap.
  uint64_t max_ratio = 50;
  uint64_t ratio_floor_bytes = uint64_t{64} << 20;
  // Left free on the destination's filesystem: a full disk there (the
  // daemon's /tmp is on the root filesystem) would fail SQLite's commits.
  uint64_t reserve_free_bytes = uint64_t{1} << 30;
};

// What may be unpacked from an archive of `archive_bytes` into a
// filesystem with `free_bytes` available (pure, for tests).
uint64_t UnpackBudget(const UnpackLimits& limits, uint64_t archive_bytes, uint64_t free_bytes);

struct UnpackResult {
  uint64_t files = 0;
  uint64_t bytes = 0;
};

// Unpacks into `dest` (an existing, empty directory we own). Files are
// created 0600, directories 0700, never through an existing path. On
// error `dest` may hold part of the archive: the caller removes it.
Expected<UnpackResult> UnpackArchive(const std::string& archive_path, const std::string& dest,
                                     const UnpackLimits& limits = {});
// The same from an open archive (read from offset 0; hashed before from
// the same descriptor, so what is checked is what is unpacked); `name` for
// messages.
Expected<UnpackResult> UnpackArchiveFd(int archive_fd, const std::string& name,
                                       const std::string& dest, const UnpackLimits& limits = {});

// The checks on one entry's path, apart from reading: the relative path
// to create, or why it is refused.
Expected<std::string> SafeEntryPath(const std::string& entry_path);

}  // namespace jobmon::diagnose
