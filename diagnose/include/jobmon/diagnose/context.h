#pragma once
// What every playbook is given besides the query API: the job's time frame,
// its hosts and metric families (discovery), the step <-> wall-clock map,
// its checkpoint windows and what the triage of its log found. Built once
// per diagnosis (discovery.h, window.h); playbooks only read it.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "jobmon/diagnose/prom_source.h"

namespace jobmon::diagnose {

struct StepTime {
  int64_t step = 0;
  double time = 0;  // unix seconds the step was first seen
};

// A checkpoint save and the steps just after it (async checkpointing):
// spikes inside are expected, not anomalies (docs/diagnose.md,
// "Checkpointing interference").
struct CheckpointWindow {
  int64_t step = 0;
  TimeRange range;
};

struct TriageFacts {
  std::string primary_class;             // triage class id ("hang", "oom-host", ...) or ""
  std::string status;                    // "failed", "hanging", ... or ""
  std::optional<double> crash_time;      // the failure line's time
  std::optional<double> hang_start;      // the last step's time of a hung job
  std::optional<double> heartbeat_stop;  // crash_time - heartbeat timeout
  std::optional<double> heartbeat_timeout_seconds;
  std::vector<std::string> accused_hosts;
  std::optional<std::string> coordinator_host;
  std::optional<int64_t> last_step;  // the log's, for the tb_step cross-check
  std::optional<int64_t> checkpoint_period;
};

struct DiagnoseContext {
  std::string job;                          // job id, or the path given, for the report
  TimeRange tsdb_range;                     // what the TSDB holds
  TimeRange job_range;                      // the job's own time (first to last sample of the job)
  TimeRange window;                         // the window of interest for the playbook
  std::vector<std::string> hosts;           // hosts with samples in the TSDB
  std::vector<std::string> expected_hosts;  // the job's nodes (manifest); empty: unknown
  std::vector<std::string> families;        // metric names in the TSDB
  std::vector<StepTime> steps;              // from tb_step, else from the log
  std::vector<CheckpointWindow> checkpoints;
  TriageFacts triage;
  double scrape_interval_seconds = 5;
  // The range of rate()/increase(): docs/diagnose.md's 5m, shortened for jobs
  // shorter than that so a rate still stays inside the job (window.h).
  double rate_window_seconds = 300;

  bool HasFamily(const std::string& name) const;
  bool InCheckpoint(double time) const;
  std::optional<double> TimeOfStep(int64_t step) const;
};

}  // namespace jobmon::diagnose
