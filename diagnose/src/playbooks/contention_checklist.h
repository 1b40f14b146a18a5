#pragma once
// Playbook 7's contention checklist (docs/diagnose.md, "Contention
// checklist"): at the time a throughput drop or step-time increase began,
// every contention source is checked against the job's own steady state
// before it: CPU, TCP, RDMA, storage I/O, memory, GPU thermal, GPU hardware
// (training-level rows come from the playbook's own tb_* findings). Each row
// gets its numbers; deviations become findings dated by their onset, so the
// earliest one can lead the chain (temperature -> clock -> power -> steps).

#include "jobmon/diagnose/context.h"
#include "jobmon/diagnose/prom_source.h"
#include "jobmon/diagnose/result.h"

namespace jobmon::diagnose::playbook {

struct ContentionWindows {
  TimeRange baseline;  // steady state before the anomaly
  TimeRange at;        // around the anomaly's onset
};

// Appends one evidence table (a row per source) and the findings to `result`.
void RunContentionChecklist(PromSource& source, const DiagnoseContext& context,
                            const ContentionWindows& windows, PlaybookResult& result);

}  // namespace jobmon::diagnose::playbook
