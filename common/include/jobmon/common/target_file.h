#pragma once
// targets/<node>.json in the diag dir (diag_dir.h): the Prometheus file_sd
// file through which a node's exporter is found. Written by that node's
// prolog (as the job's user), read by the job's Prometheus and by the daemon,
// which scrapes the same exporters itself. The one definition of its shape
// for both sides. The file is the job's user's to change: a reader checks
// every address before use (the daemon's CheckTargets).

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "jobmon/common/expected.h"
#include "jobmon/common/user_file.h"

namespace jobmon {

// One exporter as a target file names it.
struct ScrapeTarget {
  std::string host;     // the `host` label; the address when it has none
  std::string address;  // "10.0.0.11:9400", as written: not validated here
};

// [{"targets": ["10.201.0.11:9400"], "labels": {"host": "node1"}}]
std::string RenderTargetFile(const std::string& address_and_port, const std::string& node);

// Any file_sd file: a JSON array of {"targets": [...], "labels": {...}};
// groups and targets of another shape are skipped, a non-array is an error.
Expected<std::vector<ScrapeTarget>> ParseFileSdTargets(std::string_view json);

inline constexpr size_t kMaxTargetFileBytes = size_t{64} << 10;
inline constexpr size_t kMaxTargetFiles = 256;

struct DiagTargets {
  std::vector<ScrapeTarget> targets;  // as the files say: not validated yet
  std::vector<std::string> problems;  // a file refused, malformed, over a cap
};
// Every targets/<node>.json of a diag dir (sorted, at most kMaxTargetFiles),
// each opened with OpenUserFile as `user` (user_file.h; nullopt: the type
// and size checks only, for a reader running as the job's user itself).
DiagTargets ReadDiagTargets(const std::string& diag_dir, const std::optional<JobUser>& user);

}  // namespace jobmon
