#pragma once
// Confining every query to one job in a central store (VictoriaMetrics or
// a Prometheus fed by the plugin's remote_write), where many jobs' series
// share metric names and hosts and only the external labels `slurm_job_id`
// and `cluster` (spank/lifecycle/prometheus_config.cc) tell them apart.
// The confinement is done once, here, below every playbook, discovery,
// window, observability check and comparison: JobScopedSource rewrites each
// PromQL expression it is asked so that every vector selector carries the
// job's matchers, and asks label values with a match[] of them. A playbook
// cannot forget it, and a query that cannot be rewritten is not sent.

#include <string>
#include <string_view>

#include "jobmon/common/expected.h"
#include "jobmon/diagnose/prom_source.h"

namespace jobmon::diagnose {

// `slurm_job_id="1234"` and, with a cluster, `,cluster="name"` (values
// escaped as PromQL strings).
std::string JobMatchers(std::string_view job_id, std::string_view cluster);

// Pure: `promql` with `matchers` ANDed into every vector selector: `up` ->
// `up{m}`, `x{a="b"}` -> `x{a="b",m}`, `{__name__=~"r"}` ->
// `{__name__=~"r",m}`, inside functions, aggregations, subqueries and
// binary expressions alike. Function and aggregation names, keywords,
// `by`/`without`/`on`/`ignoring`/`group_*` label lists, strings, numbers and
// durations are left as they are. An unterminated string, brace or bracket
// is an error (the query would be sent unconfined otherwise).
Expected<std::string> ScopeSelectors(std::string_view promql, std::string_view matchers);

// A PromSource whose every query is confined to `matchers` (JobMatchers).
class JobScopedSource : public PromSource {
 public:
  JobScopedSource(PromSource& inner, std::string matchers, std::string description)
      : inner_(inner), matchers_(std::move(matchers)), description_(std::move(description)) {}
  Expected<std::vector<Series>> QueryRange(std::string_view promql, const TimeRange& range,
                                           double step_seconds) override;
  Expected<std::vector<Series>> QueryInstant(std::string_view promql, double time) override;
  // Confined by match[]: the job's selector, ANDed with `match` when given.
  Expected<std::vector<std::string>> LabelValues(
      std::string_view label, const std::optional<TimeRange>& range = std::nullopt,
      std::string_view match = {}) override;
  std::string Describe() const override { return description_; }
  const std::string& matchers() const { return matchers_; }

 private:
  PromSource& inner_;
  std::string matchers_;
  std::string description_;
};

}  // namespace jobmon::diagnose
