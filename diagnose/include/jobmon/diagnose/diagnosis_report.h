#pragma once
// A diagnosis as text, the form the monitor attaches to an alert: made in
// this process (ReportOf) or in a child process that ran as the job's user
// and printed it (`jobmon diagnose --for-monitor`, kReportSchema), so that
// nothing the job's user controls is read by the daemon itself.

#include <functional>
#include <string>
#include <string_view>

#include "jobmon/common/expected.h"
#include "jobmon/diagnose/diagnose_target.h"

namespace jobmon::diagnose {

inline constexpr std::string_view kReportSchema = "jobmon.diagnose-report/v1";

struct DiagnosisReport {
  TargetOutcome::Status status = TargetOutcome::Status::kDiagnosed;
  std::string error;     // what failed, for the other statuses
  std::string markdown;  // kDiagnosed: RenderMarkdown
  std::string verdicts;  // kDiagnosed: VerdictLines
};

DiagnosisReport ReportOf(const TargetOutcome& outcome);

// One JSON object: {"schema", "status", "error", "markdown", "verdicts"}.
std::string ReportJson(const DiagnosisReport& report);
// The child's output; an error when it is not that object (the child
// crashed, or printed something else), never an exception.
Expected<DiagnosisReport> ParseReportJson(std::string_view text);

// What the monitor's end-of-job diagnosis calls: a report for a request.
using ReportDiagnoser = std::function<DiagnosisReport(const TargetRequest&)>;
// The diagnosis in this process (tests, and callers that read nothing of
// another user's).
ReportDiagnoser InProcess(TargetDiagnoser diagnoser);

}  // namespace jobmon::diagnose
