#pragma once
// What a playbook returns and a diagnosis is made of: findings that carry
// their numbers (host, GPU, device, value, time), evidence tables with the
// query they came from, the root cause (earliest anomaly) and the chain
// after it. Rendered by report.h (Markdown, JSON).

#include <optional>
#include <string>
#include <vector>

#include "jobmon/chart/picture.h"
#include "jobmon/diagnose/context.h"

namespace jobmon::diagnose {

enum class Severity { kInfo, kWarning, kCritical };
const char* ToString(Severity severity);

struct Finding {
  std::string code;  // stable id shared with tests and JSON ("ecc-uncorrectable", ...)
  Severity severity = Severity::kInfo;
  std::string family;             // the metric (or "observability", "training")
  std::string host, gpu, device;  // empty where not per host / GPU / device
  std::optional<double> value;
  std::string unit;            // "W", "%", "/s", "count", ...
  std::optional<double> time;  // when it started (first anomalous sample)
  std::string text;            // one sentence with the numbers
};

struct EvidenceRow {
  std::string host, gpu, value, interpretation;
};

struct EvidenceTable {
  std::string title;
  std::string query;  // the PromQL it came from
  std::vector<EvidenceRow> rows;
};

// Data not to trust (ghost data, gaps, failing collectors), by host and family.
struct UntrustedRange {
  std::string host, family;
  TimeRange range;
  std::string reason;
};

struct PlaybookResult {
  std::string playbook;  // "hang", "heartbeat", ... (playbooks.h)
  // The playbook's own window of interest; unset: the diagnosis' context.window.
  std::optional<TimeRange> window;
  std::string analysis_type;  // docs/diagnose.md's: hang | heartbeat | oom | hardware | ...
  std::string verdict;        // a short code, e.g. "busy-wait-hang", "false-positive"
  std::string summary;        // plain English: what the metrics show, the root cause
  std::vector<EvidenceTable> evidence;
  std::vector<Finding> anomalies;
  std::optional<Finding> root_cause;  // the earliest anomaly
  std::vector<Finding> chain;         // what followed it, in time order
  std::string correlation;            // with the triage's classification
  std::vector<std::string> next_steps;
  std::vector<std::string> errors;  // queries that failed: the verdict is partial
};

struct ObservabilityResult {
  std::vector<Finding> problems;
  std::vector<UntrustedRange> untrusted;
  std::vector<std::string> errors;  // queries that failed: the check is partial
};

// Earliest finding by time (findings without a time come last); the rest,
// time-ordered, is the chain. Shared by every playbook and the comparison.
// Findings dated within `same_time_seconds` of each other (one query step:
// the data cannot order them) are put in causal order (CausalRank): a
// contention source before the GPU symptoms before the training symptoms
// it explains; the playbook's order breaks remaining ties. A GPU's clock or
// power drop up to 30 s before a cause on that same GPU (thermal-high) is
// its symptom: the drop is seen as the temperature ramp begins, the cause
// only when the ramp crosses its threshold.
void SetRootCauseAndChain(PlaybookResult& result, double same_time_seconds = 0);

// Where a finding's code sits in docs/diagnose.md's chains ("Contention
// checklist", GPU thermal: temperature rise -> clock throttle -> power drop
// -> throughput drop; "Common pitfalls": power, clock, utilization and
// throughput drops are symptoms, not causes): 0 a cause (system or
// training-level event), 1 a clock drop, 2 GPU power/utilization symptoms,
// 3 step time and throughput.
int CausalRank(const std::string& code);

}  // namespace jobmon::diagnose

namespace jobmon::diagnose {

// Multi-job comparison (docs/diagnose.md "Comparing two jobs", report
// format of its step 8).
struct ConfigDifference {
  std::string parameter, a, b;
};
struct MetricComparison {
  std::string metric;  // PromQL or family
  std::optional<double> a, b;
  std::string delta;  // "+12.5%" or "+3.0"
  std::string likely_cause;
  std::string contention_source;           // Playbook 7's checklist row ("CPU", "Network (RDMA)")
  std::string unit;                        // "/s", "%", "W", ...
  std::optional<double> noise_a, noise_b;  // standard deviation over time of the steady state
  bool diverges = false;                   // beyond noise and the family's floor
  bool explained_by_config = false;        // a config difference accounts for it
};
struct Comparison {
  std::string job_a, job_b;
  std::vector<ConfigDifference> config_differences;
  std::optional<int64_t> overlap_first_step, overlap_last_step;
  int64_t warmup_steps_skipped = 0;           // after the later job's first step
  std::optional<TimeRange> range_a, range_b;  // the overlap in each job's wall clock
  std::vector<MetricComparison> metrics;
  std::optional<Finding> root_cause;  // the first diverging family
  std::string summary;
  std::vector<std::string> errors;
};

inline constexpr const char* kDiagnoseJsonSchema = "jobmon.diagnose/v1";

// A diagnosis read from the cluster's central store (central_store.h).
struct CentralStoreSource {
  std::string url;
  std::string matchers;   // what every selector was confined by
  bool fallback = false;  // the job's archive or TSDB was gone
};

// One diagnosis: what was opened, what it holds, the playbooks' results.
struct Diagnosis {
  std::string source;  // PromSource::Describe()
  std::optional<CentralStoreSource> central_store;
  DiagnoseContext context;
  bool tsdb_matches_log = true;  // the tb_step cross-check
  std::string tsdb_check;        // what the cross-check compared
  ObservabilityResult observability;
  std::vector<PlaybookResult> playbooks;
  std::optional<Comparison> comparison;
  std::vector<std::string> warnings;
  // The chart (picture.h), when asked for (`jobmon diagnose --html`), and
  // its queries that failed (the panels then lack those lines).
  std::optional<chart::Picture> picture;
  std::vector<std::string> picture_errors;
};

}  // namespace jobmon::diagnose
