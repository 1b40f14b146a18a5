#pragma once
// The monitor scrapes a --diag job's exporters itself, over the private
// network (the per-job Prometheus stays loopback-only). Targets come from
// the diag dir's file_sd files; all of a cycle's scrapes run concurrently
// (libcurl multi) under one deadline, so a dead node costs one timeout,
// not one per target.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "jobmon/common/expected.h"

namespace jobmon::monitor {

struct ScrapeTarget {
  std::string host;     // the `host` label
  std::string address;  // "10.0.0.11:9400"
};

// One Prometheus file_sd file: [{"targets": ["ip:port"], "labels": {"host": ...}}].
Expected<std::vector<ScrapeTarget>> ParseFileSdTargets(std::string_view json);
// Every targets/*.json of a diag dir (unreadable or malformed files are skipped).
std::vector<ScrapeTarget> ReadDiagTargets(const std::string& diag_dir);

struct ScrapeResult {
  bool ok = false;
  std::string body;   // the exposition text
  std::string error;  // why not
};

// GET http://<address>/metrics for every target at once; results in order.
std::vector<ScrapeResult> ScrapeAll(const std::vector<ScrapeTarget>& targets,
                                    double timeout_seconds, size_t max_body = 8 << 20);

}  // namespace jobmon::monitor
