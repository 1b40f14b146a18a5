#pragma once
// The labels that tell one job's series from another's in a central store,
// and how a label value is written into PromQL: one contract between the
// plugin (which sets them as the per-job Prometheus's external labels,
// spank/lifecycle/prometheus_config.cc), the daemon's store mode
// (monitor/src/evidence/store_query.cc) and `jobmon diagnose` against a store
// (diagnose/src/access/job_scope.cc).

#include <string>
#include <string_view>

namespace jobmon::store_labels {

inline constexpr char kJobId[] = "slurm_job_id";  // the Slurm job id, decimal
inline constexpr char kCluster[] = "cluster";     // slurm.conf's ClusterName, when set
inline constexpr char kUser[] = "user";           // the job's user (vmauth ties tokens to it)

// A PromQL string literal: `"` + text with `\`, `"` and newlines escaped + `"`.
std::string PromQlString(std::string_view text);

// `label="value"` with the value as a PromQL string.
std::string Matcher(std::string_view label, std::string_view value);

// Text that an RE2 label matcher (=~) matches literally, already escaped
// for the PromQL string it goes into: "a.b" -> `a\\.b`.
std::string RegexLiteral(std::string_view text);

}  // namespace jobmon::store_labels
