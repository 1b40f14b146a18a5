#pragma once
// The time frame of a diagnosis (docs/diagnose.md, workflow step 4): what
// the triage of the log says (failure time, hang start, when heartbeats
// stopped), the step <-> wall-clock map (tb_step, else the log's stamped
// step lines), the checkpoint windows ("Checkpointing interference"), the
// rate() window, the window of interest per playbook, and the step 3
// cross-check that the TSDB is the job's. Pure but for QueryStepMap and
// CrossCheckTsdb.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "jobmon/diagnose/context.h"
#include "jobmon/diagnose/prom_source.h"
#include "jobmon/triage/triage.h"

namespace jobmon::diagnose {

TriageFacts FactsFromTriage(const triage::TriageReport& report);

// First time each step is seen in tb_step samples (any host), steps rising.
std::vector<StepTime> StepMapFromSeries(const std::vector<Series>& tb_step);
// The same from a log's lines: recognised step lines with an ISO or absl
// stamp (`year` for absl stamps, which carry none). Steps counted as
// triage counts them.
std::vector<StepTime> StepMapFromLogLines(const std::vector<std::string_view>& lines, int year);
// max(tb_step) over `range`, as a step map.
Expected<std::vector<StepTime>> QueryStepMap(PromSource& source, const TimeRange& range,
                                             double step_seconds);

// Each save at step k*period (inside the map's steps) and `after_steps`
// steps after it (async checkpointing), from the last map point before the
// save to the first one after those steps.
std::vector<CheckpointWindow> CheckpointWindows(const std::vector<StepTime>& steps, int64_t period,
                                                int64_t after_steps = 2);

// The reference's 5m, shortened to a quarter of a job shorter than 20m,
// never under 4 scrape intervals (so rate() always has samples).
double RateWindowSeconds(double job_seconds, double scrape_interval_seconds);

// The window of interest for a playbook's analysis type (hang: from the last
// good step to the job's end; heartbeat: around when heartbeats stopped;
// the others: the whole job), inside the job's range.
TimeRange WindowFor(std::string_view analysis_type, const DiagnoseContext& context);

struct CrossCheck {
  bool checked = false;  // both sides known
  bool matches = true;
  std::string sentence;
};
// tb_step at the job's end against the log's last step: equal, or apart by
// no more than the steps one scrape interval holds (at least 1: tb_step and
// a log's step lines may count from 1 and 0).
CrossCheck CompareSteps(std::optional<int64_t> tsdb_last_step, std::optional<int64_t> log_last_step,
                        double steps_per_scrape);
// Queries max(tb_step) at the job's end and compares.
CrossCheck CrossCheckTsdb(PromSource& source, const DiagnoseContext& context);

}  // namespace jobmon::diagnose
