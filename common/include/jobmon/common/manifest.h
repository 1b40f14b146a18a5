#pragma once
// manifest.json in the diag dir (diag_dir.h): what a person, the daemon and
// `jobmon status` need to find a job's diagnostics. Written by the head
// node's prolog, updated by its epilog and the archiver; always replaced
// atomically. The one definition of its fields, for every writer and reader.
//
// The file is in a directory the job's user controls: parsing is kept apart
// from reading (ReadManifest goes through the user-file opener; a caller
// with its own opener passes the text to a parser), and a reader that shows
// or acts on a value checks it itself (the daemon rebuilds the URL and the
// tunnel command from Slurm's node list and a checked port).

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "jobmon/common/expected.h"
#include "jobmon/common/user_file.h"

namespace jobmon {

inline constexpr std::string_view kManifestSchema = "jobmon.manifest/v1";

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
  // The live TSDB on the head node's local disk (the plugin's tsdb_dir);
  // removed once archived into the diag dir.
  std::string tsdb_dir;
  std::string targets_dir;
  // The job's stdout file (Slurm's StdOut, patterns expanded), so a
  // diagnosis of the diag dir finds the log to triage after Slurm forgot it.
  std::string job_log;
  std::string jobmon_version;
  std::string prometheus_version;
  std::string remote_write;
  // --diag-on-hang (diag_option.h): "notify" unless the owner chose more.
  std::string on_hang = "notify";
  // starting -> running -> stopping -> archiving -> archived | archive_failed
  // (or ended when archiving is off or there is no TSDB)
  std::string state;
  std::vector<std::string> degraded;  // one line per thing that did not start
  std::string started_at, ended_at;   // ISO 8601 UTC
  std::optional<ArchiveInfo> archive;
  std::string archive_error;
};

// Pretty-printed JSON with the schema, ending in a newline.
std::string ToJson(const Manifest& manifest);

// Every field the text has with its type (and, for numbers, its range);
// `problems` names the others (left at their defaults) and a missing or other
// schema. Fails only when the text is not a JSON object.
struct ManifestFields {
  Manifest manifest;
  std::vector<std::string> problems;
};
Expected<ManifestFields> ParseManifestFields(std::string_view json);

// Strict: the schema is kManifestSchema and every field present has its type
// (the plugin reading back the file it wrote).
Expected<Manifest> ParseManifest(std::string_view json);

// Read through the user-file opener (no symlink, FIFO or device; capped in
// size and time), as options.user where root reads it for the job; strict.
inline constexpr size_t kMaxManifestBytes = size_t{1} << 20;
Expected<Manifest> ReadManifest(const std::string& path, const UserFileOptions& options = {});
Expected<void> WriteManifest(const std::string& path, const Manifest& manifest);

}  // namespace jobmon
