// Two jobs side by side (docs/diagnose.md, "Comparing two jobs"):
// config first, then the step-aligned steady state of the contention sweep
// on both, then the first family that diverges beyond its noise and that no
// config difference explains.

#include "compare/compare.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "compare/sweep.h"
#include "jobmon/common/metric_names.h"
#include "playbooks/kit.h"

namespace jobmon::diagnose {

namespace {

using compare_detail::Role;
using compare_detail::SweepMetric;

std::string Number(double v) {
  if (v == 0) return "0";
  if (std::fabs(v) >= 1e6 || std::fabs(v) < 1e-3) return fmt::format("{:.3g}", v);
  return fmt::format("{:.4g}", v);
}

std::string DeltaText(double a, double b) {
  double delta = b - a;
  std::string out = (delta >= 0 ? "+" : "") + Number(delta);
  if (a != 0) out += fmt::format(" ({:+.1f}%)", 100 * delta / std::fabs(a));
  return out;
}

// Config keys that change the work itself (not which job it is nor where it
// ran): any of them explains the workload-bound families (step time,
// throughput, GPU power/clock/temperature/utilisation).
std::vector<std::string> WorkloadKeys(const std::vector<ConfigDifference>& diffs) {
  std::vector<std::string> out;
  for (const auto& d : diffs) {
    if (d.parameter == "NODE_LIST" || d.parameter == "RAY") continue;
    out.push_back(d.parameter);
  }
  return out;
}

// A different observability stack (RAY=1 vs 0) runs other processes
// (docs/diagnose.md, "The workflow", step 4): it explains a procs_running difference.
bool ObservabilityDiffers(const std::vector<ConfigDifference>& diffs) {
  return std::any_of(diffs.begin(), diffs.end(),
                     [](const ConfigDifference& d) { return d.parameter == "RAY"; });
}

std::string JoinFirst(const std::vector<std::string>& items, size_t n) {
  std::string out;
  for (size_t i = 0; i < items.size() && i < n; ++i) out += (i ? ", " : "") + items[i];
  if (items.size() > n) out += fmt::format(" (+{} more)", items.size() - n);
  return out;
}

struct Side {
  PromSource& source;
  const DiagnoseContext& context;
  TimeRange range;
  std::string name;  // "A" / "B" (job id in texts)
};

std::optional<SteadyState> Measure(Side& side, const SweepMetric& metric,
                                   std::vector<std::string>& errors) {
  if (!side.context.families.empty() && !side.context.HasFamily(std::string(metric.family))) {
    return std::nullopt;
  }
  std::string query = compare_detail::SweepQuery(metric, side.context);
  auto answer = side.source.QueryRange(query, side.range, StepFor(side.range, side.context));
  if (!answer) {
    errors.push_back(fmt::format("{}: {}: {}", side.name, query, answer.error().message));
    return std::nullopt;
  }
  return SteadyStateOf(*answer, side.context);
}

// The overlap's wall-clock range in one job: from the first compared step to
// the end of the last (the next step's start, else the last step's own).
TimeRange RangeOfSteps(const DiagnoseContext& context, int64_t first, int64_t last) {
  TimeRange r;
  r.start = context.TimeOfStep(first).value_or(context.job_range.start);
  auto end = context.TimeOfStep(last + 1);
  if (!end) end = context.TimeOfStep(last);
  r.end = end.value_or(context.job_range.end);
  return r;
}

}  // namespace

Comparison Compare(PromSource& a, const DiagnoseContext& ca, PromSource& b,
                   const DiagnoseContext& cb, std::string_view log_header_a,
                   std::string_view log_header_b) {
  Comparison out;
  out.job_a = ca.job;
  out.job_b = cb.job;
  out.config_differences =
      DiffConfig(ParseConfigHeader(log_header_a), ParseConfigHeader(log_header_b));

  Side side_a{a, ca, ca.job_range, ca.job.empty() ? "A" : ca.job};
  Side side_b{b, cb, cb.job_range, cb.job.empty() ? "B" : cb.job};
  if (auto overlap = OverlapSteps(ca.steps, cb.steps)) {
    out.overlap_first_step = overlap->first_step;
    out.overlap_last_step = overlap->last_step;
    out.warmup_steps_skipped = overlap->warmup_skipped;
    side_a.range = RangeOfSteps(ca, overlap->first_step, overlap->last_step);
    side_b.range = RangeOfSteps(cb, overlap->first_step, overlap->last_step);
  } else {
    out.errors.push_back(
        "no common training steps (no step map, or disjoint step ranges): whole jobs compared, "
        "not step-aligned");
  }
  out.range_a = side_a.range;
  out.range_b = side_b.range;

  const auto workload_keys = WorkloadKeys(out.config_differences);
  const bool observability_differs = ObservabilityDiffers(out.config_differences);
  bool rdma_diverges = false;
  std::vector<std::string> tcp_only;
  std::vector<std::string> symptoms;   // diverging, not explained by config
  std::vector<std::string> explained;  // diverging, explained by a config difference
  std::string root_note;               // the root cause in a few words, for the summary

  for (const auto& metric : compare_detail::Sweep()) {
    auto sa = Measure(side_a, metric, out.errors);
    auto sb = Measure(side_b, metric, out.errors);
    if (!sa && !sb) continue;
    MetricComparison row;
    row.metric = compare_detail::SweepQuery(metric, ca);
    row.contention_source = std::string(metric.contention_source);
    row.unit = std::string(metric.unit);
    if (sa) row.a = sa->mean, row.noise_a = sa->stddev;
    if (sb) row.b = sb->mean, row.noise_b = sb->stddev;
    if (!sa || !sb) {
      row.likely_cause = fmt::format("not in job {}", sa ? side_b.name : side_a.name);
      out.metrics.push_back(std::move(row));
      continue;
    }
    row.delta = DeltaText(sa->mean, sb->mean);
    row.diverges = Diverges(*sa, *sb, metric.min_abs, metric.min_rel);
    if (!row.diverges) {
      row.likely_cause = "within noise";
      out.metrics.push_back(std::move(row));
      continue;
    }
    const bool b_higher = sb->mean > sa->mean;
    const Side& high = b_higher ? side_b : side_a;
    const SteadyState& low_state = b_higher ? *sa : *sb;
    const SteadyState& high_state = b_higher ? *sb : *sa;
    if (metric.workload && !workload_keys.empty()) {
      row.explained_by_config = true;
      row.likely_cause = "config difference: " + JoinFirst(workload_keys, 3);
    } else if (metric.family == metric_names::kProcsRunning && observability_differs) {
      row.explained_by_config = true;
      row.likely_cause = "config difference: RAY (a different observability stack)";
    } else if (metric.role == Role::kTcp) {
      row.likely_cause = fmt::format(
          "{} higher in job {}: TCP carries NFS/gRPC, not collectives; not a TGS cause unless "
          "RDMA also differs",
          metric.meaning, high.name);
    } else {
      row.likely_cause = fmt::format("{} (higher in job {})", metric.meaning, high.name);
    }
    std::string per_host_note;
    auto hosts = HostsCarryingDelta(low_state, high_state);
    if (metric.family == metric_names::kProcsRunning && !row.explained_by_config) {
      // Reference step 6: a uniform delta across all hosts points to a
      // software-level leak, a per-node one to background processes or
      // a different node allocation.
      if (!hosts.empty() && hosts.size() == high_state.per_host.size()) {
        row.likely_cause = fmt::format(
            "uniform +{} runnable processes on every host of job {}: a software-level resource "
            "leak or extra processes (e.g. threads leaked on checkpoint restore, another "
            "monitoring stack)",
            Number(high_state.mean - low_state.mean), high.name);
      } else if (!hosts.empty()) {
        row.likely_cause = fmt::format(
            "more runnable processes on {} of job {} only: background processes or a different "
            "node allocation",
            JoinFirst(hosts, 4), high.name);
      }
    }
    if (metric.family.starts_with("hw_rdma_")) rdma_diverges = true;
    if (metric.role == Role::kTcp) tcp_only.push_back(std::string(metric.family));
    if (row.explained_by_config) {
      explained.push_back(std::string(metric.family));
    } else if (metric.role == Role::kSymptom) {
      symptoms.push_back(std::string(metric.family));
    }

    if (metric.role == Role::kCause && !row.explained_by_config && !out.root_cause) {
      Finding f;
      f.severity = Severity::kWarning;
      f.code = std::string(metric.code);
      f.family = std::string(metric.family);
      if (hosts.size() == 1) f.host = hosts.front();
      f.value = sb->mean - sa->mean;
      f.unit = row.unit;
      f.time = high.range.start;
      f.text = fmt::format("{}: job {} {} vs job {} {} ({}, noise ±{} / ±{}): {}", row.metric,
                           side_a.name, Number(sa->mean), side_b.name, Number(sb->mean), row.delta,
                           Number(sa->stddev), Number(sb->stddev), row.likely_cause);
      out.root_cause = std::move(f);
      root_note = fmt::format("{} ({} {} in job {} vs job {})", metric.code, metric.family,
                              row.delta, side_b.name, side_a.name);
    }
    out.metrics.push_back(std::move(row));
  }

  // The summary, in the order the reference reasons.
  std::string overlap =
      out.overlap_first_step
          ? fmt::format("steps {} to {} ({} warmup steps skipped)", *out.overlap_first_step,
                        *out.overlap_last_step, out.warmup_steps_skipped)
          : std::string("whole jobs (no common steps)");
  std::string config =
      out.config_differences.empty()
          ? "identical config"
          : fmt::format("{} config difference{} ({})", out.config_differences.size(),
                        out.config_differences.size() == 1 ? "" : "s",
                        JoinFirst(
                            [&] {
                              std::vector<std::string> keys;
                              for (const auto& d : out.config_differences)
                                keys.push_back(d.parameter);
                              return keys;
                            }(),
                            4));
  std::string verdict;
  if (out.root_cause) {
    verdict = "root cause: " + root_note;
  } else if (!tcp_only.empty() && !rdma_diverges && symptoms.empty()) {
    verdict =
        "only TCP differs beyond noise; TCP retransmits alone do not explain a throughput "
        "difference (no RDMA difference)";
  } else if (!symptoms.empty()) {
    verdict = fmt::format(
        "{} differ{} but no contention source does; compare the jobs' logs and code (reference "
        "step 7)",
        JoinFirst(symptoms, 3), symptoms.size() == 1 ? "s" : "");
  } else if (!explained.empty()) {
    verdict = fmt::format("{} differ{}, accounted for by the config differences",
                          JoinFirst(explained, 3), explained.size() == 1 ? "s" : "");
  } else {
    verdict = "no metric family differs beyond its noise";
  }
  out.summary =
      fmt::format("{} vs {}: {}; {}; {}.", side_a.name, side_b.name, overlap, config, verdict);
  return out;
}

}  // namespace jobmon::diagnose
