#pragma once
// A job's past evidence for a daemon that was not watching: in scrape mode
// the job's Prometheus listens on its head node's loopback only, so the
// head node's exporter (which the daemon already reaches, on the
// cluster-private address its allow-list guards) answers one shape of
// Prometheus's range query on its behalf: a plain selector of metric
// families over a bounded span. Nothing else is forwarded, so the exporter
// lends no PromQL, no admin API and no other label to whoever reaches it.
// One contract between the exporter (exporter/src/history_proxy.cc), which
// checks and forwards the request, and the monitor
// (monitor/src/evidence/history_backfill.cc), which asks it.

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "jobmon/common/expected.h"

namespace jobmon::job_history {

// Prometheus's own path: the daemon asks the exporter with the client it
// asks any Prometheus with.
inline constexpr char kPath[] = "/api/v1/query_range";
// A job's window reads fewer than this many families.
inline constexpr size_t kMaxFamilies = 64;
// Points per series ((end - start) / step, both ends counted) and the
// span: enough for the daemon's window, and a bound on what one request
// costs the job's Prometheus and the exporter.
inline constexpr double kMaxPoints = 1500;
inline constexpr double kMaxSeconds = 7 * 86400;
// The most a forwarded answer may be: a job of hundreds of GPUs at
// kMaxPoints per series.
inline constexpr size_t kMaxAnswerBytes = size_t{64} << 20;

// `{__name__=~"a|b|c"}`: the only query forwarded. Names must be metric
// names ([a-zA-Z_:][a-zA-Z0-9_:]*).
std::string FamilySelector(const std::vector<std::string>& families);

struct Request {
  std::vector<std::string> families;
  double start = 0, end = 0, step = 0;  // unix seconds; step > 0
};

// A range query's decoded parameters, checked: the query a FamilySelector
// of at most kMaxFamilies names, numbers for start, end and step, a span
// of at most kMaxSeconds and kMaxPoints. The error says which rule failed.
Expected<Request> CheckRequest(std::string_view query, std::string_view start, std::string_view end,
                               std::string_view step);

// The checked request as the path and query string to send the job's
// Prometheus, rebuilt from its parts (nothing of the caller's string goes
// through).
std::string ForwardTarget(const Request& request);

}  // namespace jobmon::job_history
