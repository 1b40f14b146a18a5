#pragma once
// Pure parsers of Prometheus's answers (HTTP API v1) and of a TSDB block's
// meta.json, apart from fetching them (prom_http.h, tsdb_access.h), tested
// against answers captured from Debian's /usr/bin/prometheus
// (tests/fixtures/prometheus_api/make_fixtures.py) and fuzzed.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "jobmon/common/expected.h"
#include "jobmon/diagnose/prom_source.h"

namespace jobmon::diagnose {

// A query's answer (/api/v1/query, /api/v1/query_range): a matrix, a vector
// (one sample per series), a scalar (one series without labels) or a string
// (refused: nothing reads one). Values are strings in the API: "NaN" is
// dropped (a sample with no value), "+Inf"/"-Inf" kept as infinities. An
// error answer ({"status":"error","errorType":...,"error":...}, HTTP 400,
// 422, 503) becomes an Error with Prometheus's message.
Expected<std::vector<Series>> ParseQueryResponse(std::string_view json);

// /api/v1/label/<name>/values.
Expected<std::vector<std::string>> ParseLabelValues(std::string_view json);

// Times in milliseconds since the epoch, as the TSDB keeps them.
struct MsRange {
  int64_t min_ms = 0;
  int64_t max_ms = 0;  // a block's maxTime is exclusive (the last sample + 1)
  TimeRange seconds() const {
    return TimeRange{static_cast<double>(min_ms) / 1000, static_cast<double>(max_ms) / 1000};
  }
};

// A block's meta.json: its ULID and time range.
struct BlockMeta {
  std::string ulid;
  MsRange range;
};
Expected<BlockMeta> ParseBlockMeta(std::string_view json);

// /api/v1/status/tsdb: the head's (WAL, not yet compacted) time range;
// nullopt when the head is empty (no series: Prometheus then answers
// minTime INT64_MAX, maxTime INT64_MIN, or both at the last block's end).
Expected<std::optional<MsRange>> ParseTsdbHeadRange(std::string_view json);

// Prometheus's own /metrics (exposition text): the whole TSDB's range,
// prometheus_tsdb_lowest_timestamp to prometheus_tsdb_head_max_time (ms),
// for a live instance whose blocks are not on this machine (status/tsdb
// has only the head's). nullopt when either is missing or the TSDB is empty.
std::optional<MsRange> ParseTsdbTimesFromMetrics(std::string_view exposition);

// /api/v1/status/flags: one flag's value ("storage.tsdb.path"), to tell
// whether a Prometheus on a port is the job's own; nullopt when absent.
Expected<std::optional<std::string>> ParseStatusFlag(std::string_view json, std::string_view flag);

}  // namespace jobmon::diagnose
