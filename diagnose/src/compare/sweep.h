#pragma once
// The metrics the comparison puts side by side: docs/diagnose.md's key metrics
// for a multi-job TGS comparison and Playbook 7's contention checklist, one
// row each, in the order a root cause is looked for (causes before the
// symptoms they produce). Private to compare/.

#include <string>
#include <string_view>
#include <vector>

#include "jobmon/diagnose/context.h"

namespace jobmon::diagnose::compare_detail {

enum class Role {
  kCause,    // may be the root cause when it diverges
  kSymptom,  // follows from a cause (step time, throughput, GPU power/clock/util)
  kTcp,      // TCP: never a TGS root cause by itself (reference, Playbook 6)
  kInfo,     // shown, never a root cause (host memory, loss, ...)
};

struct SweepMetric {
  std::string_view family;
  std::string_view selector;  // extra label matchers, e.g. type="sclk"
  bool counter = false;       // compared as rate() summed per host
  std::string_view contention_source;
  std::string_view unit;
  Role role = Role::kInfo;
  std::string_view code;     // the finding code when it is the root cause
  double min_abs = 0;        // smallest delta that matters (units of the metric)
  double min_rel = 0;        // ... relative to the larger of the two means
  bool workload = false;     // a workload config difference (batch, model, steps) explains it
  std::string_view meaning;  // what a higher value in one job says
};

const std::vector<SweepMetric>& Sweep();

// The PromQL for a row: the gauge, or sum by (host) (rate(counter[window])).
std::string SweepQuery(const SweepMetric& metric, const DiagnoseContext& context);

}  // namespace jobmon::diagnose::compare_detail
