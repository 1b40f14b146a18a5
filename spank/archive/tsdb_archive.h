#pragma once
// tsdb.tar.zst: a directory packed with libarchive (pax, zstd), written to a
// temp file, fsynced and renamed into place, so a reader sees the whole
// archive or none.

#include <cstdint>
#include <functional>
#include <string>

#include "jobmon/common/expected.h"
#include "jobmon/common/sha256.h"

namespace jobmon::archive {

struct ArchiveResult {
  std::string sha256;  // of the archive file, hex
  uint64_t bytes = 0;  // archive size
  uint64_t files = 0;  // regular files packed
  uint64_t input_bytes = 0;
};

// Packs `source_dir` as `top_name/...` into `archive_path`. `progress` is
// called after each file with (files, input bytes) so far.
Expected<ArchiveResult> ArchiveDirectory(
    const std::string& source_dir, const std::string& top_name, const std::string& archive_path,
    int zstd_level, const std::function<void(uint64_t, uint64_t)>& progress = {});

// A requeued job archives once per run into the same diag dir: before the
// next archive replaces it, the one at `archive_path` moves to the first
// free `earlier(0)`, `earlier(1)`, ... (never replacing a file). Returns the
// path it moved to, or "" when there was none.
Expected<std::string> KeepEarlierArchive(const std::string& archive_path,
                                         const std::function<std::string(unsigned)>& earlier);

// Moved to common/sha256.h (diagnose checks archives with it too).
using jobmon::Sha256OfFile;

}  // namespace jobmon::archive
