#include "jobmon/diagnose/diagnose_target.h"

#include <fmt/format.h>

#include "jobmon/diagnose/diagnose.h"
#include "jobmon/diagnose/tsdb_access.h"
#include "jobmon/triage/job_input.h"
#include "jobmon/triage/log_scan.h"
#include "jobmon/triage/triage.h"

namespace jobmon::diagnose {
namespace {

using Status = TargetOutcome::Status;

TargetOutcome Failed(Status status, std::string error) {
  TargetOutcome out;
  out.status = status;
  out.error = std::move(error);
  return out;
}

void Say(const TargetRequest& request, std::string_view line) {
  if (request.progress) request.progress(line);
}

// The job's log triaged, for the window and the auto playbooks; a log that
// cannot be read weakens the diagnosis, it does not stop it.
std::optional<triage::TriageReport> TriageLog(const TargetRequest& request,
                                              const std::string& log_path,
                                              std::vector<std::string>& warnings) {
  if (log_path.empty()) {
    warnings.push_back("no job log found: no triage window, auto picks the health sweep");
    return std::nullopt;
  }
  Say(request, "triage " + log_path);
  auto scanner = triage::LogScanner::Create({request.step_regex});
  if (!scanner) {
    warnings.push_back("triage: " + scanner.error().message);
    return std::nullopt;
  }
  auto facts = (*scanner)->ScanFile(log_path);
  if (!facts) {
    warnings.push_back("triage of " + log_path + ": " + facts.error().message);
    return std::nullopt;
  }
  triage::AnalysisContext context;
  if (auto id = facts->job_id) {
    if (auto view = triage::QuerySlurmJobState(*id)) {
      context.slurm_state = view->state;
      context.slurm_exit_code = view->exit_code;
    }
  }
  triage::TriageReport report = triage::Analyze(*facts, context);
  report.log_path = log_path;
  return report;
}

TargetOutcome Run(const TargetRequest& request) {
  auto resolved = ResolveTarget(request.argument);
  if (!resolved) return Failed(Status::kInputError, resolved.error().message);
  ResolvedTarget target = *resolved;
  if (!request.log_path.empty()) target.log_path = request.log_path;

  DiagnoseInputs inputs;
  inputs.job = target.job_id.empty() ? request.argument : target.job_id;
  inputs.playbooks = request.playbooks;
  inputs.manifest = target.manifest;
  std::vector<std::string> warnings;
  inputs.triage = TriageLog(request, target.log_path, warnings);
  // MERGE (d14core): inputs.log_steps from StepMapFromLogLines when the
  // TSDB has no tb_step.

  AccessOptions options;
  options.prometheus_url = request.prometheus_url;
  options.prometheus_binary = request.prometheus_binary;
  options.query_timeout = request.query_timeout_seconds;
  options.progress = request.progress;
  auto session = OpenTsdb(target, options);
  if (!session) return Failed(Status::kAccessError, session.error().message);
  if (auto range = (*session)->DataRange(); range && *range) {
    inputs.tsdb_range = **range;
  } else {
    warnings.push_back(range ? "the TSDB holds no data"
                             : "the TSDB's time range: " + range.error().message);
  }

  CancellablePromSource source((*session)->source(), request.cancel);
  TargetOutcome out;
  out.diagnosis = Diagnose(source, inputs, request.progress);
  // MERGE (d14compare): with request.compare, resolve and open the other
  // job the same way and set out.diagnosis.comparison = Compare(...).
  if (!request.compare.empty())
    out.diagnosis.warnings.push_back("--compare " + request.compare +
                                     ": the comparison is not in this build");
  out.diagnosis.warnings.insert(out.diagnosis.warnings.begin(), warnings.begin(), warnings.end());
  return out;  // the session (and its Prometheus) ends here
}

}  // namespace

TargetOutcome DiagnoseTarget(const TargetRequest& request) {
  try {
    return Run(request);
  } catch (const DiagnosisCancelled&) {
    return Failed(Status::kCancelled, "abandoned (timeout)");
  } catch (const std::exception& e) {
    return Failed(Status::kAccessError, fmt::format("diagnosis stopped: {}", e.what()));
  }
}

}  // namespace jobmon::diagnose
