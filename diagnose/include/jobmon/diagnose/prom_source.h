#pragma once
// What a playbook reads: a Prometheus-compatible query API. The real one is
// PromHttpSource (prom_http.h: a job's live Prometheus, a read-only one over
// an archive, a central store); tests give canned answers. Playbooks ask
// PromQL and get typed series back, so they never see HTTP or JSON.

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "jobmon/common/expected.h"

namespace jobmon::diagnose {

using Labels = std::map<std::string, std::string>;

struct Sample {
  double time = 0;  // unix seconds
  double value = 0;
};

struct Series {
  Labels labels;
  std::vector<Sample> samples;  // time order; NaN values dropped by the parser

  std::string Label(const std::string& name) const {
    auto it = labels.find(name);
    return it == labels.end() ? std::string() : it->second;
  }
};

struct TimeRange {
  double start = 0, end = 0;  // unix seconds
  double seconds() const { return end - start; }
  bool Contains(double t) const { return t >= start && t <= end; }
};

class PromSource {
 public:
  virtual ~PromSource() = default;
  // /api/v1/query_range; step in seconds.
  virtual Expected<std::vector<Series>> QueryRange(std::string_view promql, const TimeRange& range,
                                                   double step_seconds) = 0;
  // /api/v1/query at `time` (always given: a finished job's "now" is past its
  // data). Each series has one sample.
  virtual Expected<std::vector<Series>> QueryInstant(std::string_view promql, double time) = 0;
  // /api/v1/label/<name>/values (within `range` when given), of the series
  // `match` selects when given (match[]: a central store's one job).
  virtual Expected<std::vector<std::string>> LabelValues(
      std::string_view label, const std::optional<TimeRange>& range = std::nullopt,
      std::string_view match = {}) = 0;
  // Where the source is, for reports ("http://127.0.0.1:9191 (read-only, archive X)").
  virtual std::string Describe() const = 0;
};

}  // namespace jobmon::diagnose
