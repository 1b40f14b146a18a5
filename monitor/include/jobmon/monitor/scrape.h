#pragma once
// The monitor scrapes a --diag job's exporters itself, over the private
// network (the per-job Prometheus stays loopback-only). Targets come from
// the diag dir's file_sd files (common/target_file.h; diag_files.h reads and
// validates them); all of a cycle's scrapes run concurrently (libcurl
// multi) under one deadline, so a dead node costs one timeout, not one per
// target.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "jobmon/common/expected.h"
#include "jobmon/common/ip_address.h"
#include "jobmon/common/target_file.h"  // ScrapeTarget, ParseFileSdTargets

namespace jobmon::monitor {

// A literal "a.b.c.d:port" or "[v6]:port", port 1-65535; no host name, no
// path, nothing else.
struct TargetAddress {
  IpAddress ip;
  int port = 0;
  std::string ToString() const;  // the canonical text
};
std::optional<TargetAddress> ParseTargetAddress(std::string_view text);

inline constexpr size_t kMaxScrapeBody = size_t{2} << 20;

struct ScrapeResult {
  bool ok = false;
  std::string body;   // the exposition text
  std::string error;  // why not
};

// GET http://<address>/metrics for every target, at most `max_parallel` at
// once (0: all at once); results in order. The URL is built here from a
// parsed literal address: a target that is not one fails without a request.
std::vector<ScrapeResult> ScrapeAll(const std::vector<ScrapeTarget>& targets,
                                    double timeout_seconds, size_t max_body = kMaxScrapeBody,
                                    size_t max_parallel = 0);

// Each scrape in flight holds a socket, and each log kept open between
// polls a descriptor (log_follower.h). systemd's default soft open-file
// limit is 1024 (hard: 524288): raise the soft limit as far as `wanted`
// scrapes and `wanted_logs` logs need (no further: children inherit it), and
// answer how many scrapes fit under the limit then in force, with room kept
// for everything else, then how many logs fit in what is left.
struct FittedConcurrency {
  int concurrency = 0;
  long open_file_limit = 0;  // the soft limit after raising; -1: unlimited
  size_t kept_logs = 0;
};
FittedConcurrency FitScrapeConcurrency(int wanted, size_t wanted_logs = 0);

}  // namespace jobmon::monitor
