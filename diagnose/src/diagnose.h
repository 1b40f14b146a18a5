#pragma once
// One diagnosis of one job's TSDB (docs/diagnose.md, workflow steps 3-5):
// discovery, the time window and step map, the tb_step cross-check, broken
// observability, then the selected playbooks, each with its own window of
// interest. Failures are values: a query that fails becomes an error of
// the step or playbook that asked it, never an abort.

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "jobmon/common/expected.h"
#include "jobmon/common/manifest.h"
#include "jobmon/diagnose/playbooks.h"
#include "jobmon/diagnose/prom_source.h"
#include "jobmon/diagnose/result.h"
#include "jobmon/triage/triage.h"

namespace jobmon::diagnose {

struct DiagnoseInputs {
  std::string job;                             // job id or the path given, for the report
  std::optional<triage::TriageReport> triage;  // of the job's log, when there is one
  std::optional<Manifest> manifest;            // its nodes are the hosts expected
  // Block meta / headStats (tsdb_access.h); required: every query stays inside it.
  TimeRange tsdb_range;
  // Playbook names, or "auto" (by the triage class) or "health" (the
  // sweep); empty is "auto".
  std::vector<std::string> playbooks;
  // The fallback when the data cannot tell (scrape_interval.h): the diag
  // dir's prometheus.yml when read, else the plugin's default.
  double scrape_interval_seconds = 5;
  bool scrape_interval_from_config = false;
  // The log's stamped step lines (StepMapFromLogLines), used when the TSDB
  // has no tb_step.
  std::vector<StepTime> log_steps;
  // Also the chart's data (Diagnosis::picture): each host's GPU
  // utilisation and power over the job, two range queries more.
  bool picture = false;
};

using ProgressFn = std::function<void(std::string_view)>;

// The playbooks `selection` names ("auto": the triage class's, "health":
// the sweep); an unknown name is an error naming it.
Expected<std::vector<const PlaybookSpec*>> SelectPlaybooks(
    const std::vector<std::string>& selection, std::string_view triage_class);

Diagnosis Diagnose(PromSource& source, const DiagnoseInputs& inputs,
                   const ProgressFn& progress = {});

}  // namespace jobmon::diagnose
