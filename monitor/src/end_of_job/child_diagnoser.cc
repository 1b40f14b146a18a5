#include "jobmon/monitor/child_diagnoser.h"

#include <fmt/format.h>

#include "jobmon/common/child_environment.h"
#include "jobmon/common/run_command.h"

namespace jobmon::monitor {

using diagnose::DiagnosisReport;
using diagnose::TargetOutcome;

std::vector<std::string> ChildDiagnoseArgv(const ChildDiagnoserOptions& options,
                                           const diagnose::TargetRequest& request) {
  std::vector<std::string> argv = {options.jobmon_binary, "diagnose", "--for-monitor", "--quiet",
                                   // No jobmon.toml: it may hold secrets the job's user must
                                   // not reach, and the end-of-job run needs none of it.
                                   "--config", "/dev/null"};
  if (!request.playbooks.empty()) {
    std::string names;
    for (const auto& name : request.playbooks) names += (names.empty() ? "" : ",") + name;
    argv.insert(argv.end(), {"--playbook", names});
  }
  argv.push_back("--");
  argv.push_back(request.argument);
  return argv;
}

namespace {

DiagnosisReport Failure(TargetOutcome::Status status, std::string error) {
  DiagnosisReport report;
  report.status = status;
  report.error = std::move(error);
  return report;
}

}  // namespace

diagnose::ReportDiagnoser ChildDiagnoser(ChildDiagnoserOptions options) {
  return [options](const diagnose::TargetRequest& request) -> DiagnosisReport {
    using Status = TargetOutcome::Status;
    CommandOptions run;
    run.timeout = options.timeout;
    run.grace = options.grace;
    run.max_output = options.max_report_bytes + 1;
    run.cancel = request.cancel;
    // None of the daemon's secrets reaches a process of the job's user.
    run.env = MinimalEnvironment();
    run.run_as = request.user;
    auto result = RunCommand(ChildDiagnoseArgv(options, request), run);
    if (!result) return Failure(Status::kAccessError, result.error().message);
    if (result->cancelled) return Failure(Status::kCancelled, "abandoned (timeout)");
    if (result->timed_out)
      return Failure(Status::kCancelled,
                     fmt::format("stopped after {}s", options.timeout.count() / 1000));
    if (result->exit_code == 126)
      return Failure(Status::kAccessError, "could not become the job's user");
    if (result->exit_code == 127)
      return Failure(Status::kAccessError, options.jobmon_binary + ": not found or not runnable");
    if (result->output.size() > options.max_report_bytes)
      return Failure(Status::kAccessError, "the report is larger than its cap");
    auto report = diagnose::ParseReportJson(result->output);
    if (!report)
      return Failure(Status::kAccessError,
                     fmt::format("{} diagnose exited {} without a report ({})",
                                 options.jobmon_binary, result->exit_code, report.error().message));
    return *report;
  };
}

}  // namespace jobmon::monitor
