#pragma once
// manifest.json in the diag dir: what a person (or the monitor) needs to
// find the job's diagnostics. Written by the head node's prolog, updated by
// its epilog and the archiver; always replaced atomically.

#include <optional>
#include <string>
#include <vector>

#include "jobmon/common/expected.h"
#include "jobmon/common/tunnel.h"  // TunnelCommand, shared with the monitor
#include "jobmon/common/user_file.h"

namespace jobmon::lifecycle {

inline constexpr const char* kManifestSchema = "jobmon.manifest/v1";

struct ArchiveInfo {
  std::string path;
  std::string sha256;
  uint64_t bytes = 0;
  int compression_level = 0;
  bool raw_tsdb_kept = true;
};

struct Manifest {
  uint32_t job_id = 0;
  std::string user;
  uint32_t uid = 0;
  std::vector<std::string> nodes;
  std::string head_node;
  std::string diag_dir;
  std::string prometheus_address;  // 127.0.0.1 on the head node
  int prometheus_port = 0;         // 0: not started
  std::string tunnel_command;
  std::string targets_dir;
  std::string jobmon_version;
  std::string prometheus_version;
  std::string remote_write;
  // starting -> running -> stopping -> archiving -> archived | archive_failed
  // (or ended when archiving is off or there is no TSDB)
  std::string state;
  std::vector<std::string> degraded;  // one line per thing that did not start
  std::string started_at, ended_at;   // ISO 8601 UTC
  std::optional<ArchiveInfo> archive;
  std::string archive_error;
};

std::string ToJson(const Manifest& manifest);
Expected<Manifest> ParseManifest(const std::string& json);

// The manifest is in the job's diag dir, which the job's user controls:
// read through the user-file opener (no symlink, FIFO or device; capped in
// size and time), as options.user where root reads it for the job.
inline constexpr size_t kMaxManifestBytes = 1 << 20;
Expected<Manifest> ReadManifest(const std::string& path, const UserFileOptions& options = {});
Expected<void> WriteManifest(const std::string& path, const Manifest& manifest);

std::string IsoNow();

}  // namespace jobmon::lifecycle
