#include "jobmon/diagnose/diagnosis_report.h"

#include <nlohmann/json.hpp>

#include "jobmon/diagnose/report.h"

namespace jobmon::diagnose {
namespace {

using Status = TargetOutcome::Status;
using json = nlohmann::json;

constexpr std::pair<Status, std::string_view> kStatusNames[] = {
    {Status::kDiagnosed, "diagnosed"},
    {Status::kInputError, "input_error"},
    {Status::kAccessError, "access_error"},
    {Status::kCancelled, "cancelled"},
};

std::string_view NameOf(Status status) {
  for (const auto& [s, name] : kStatusNames)
    if (s == status) return name;
  return "access_error";
}

std::string Text(const json& doc, const char* key) {
  auto it = doc.find(key);
  return it != doc.end() && it->is_string() ? it->get<std::string>() : std::string();
}

}  // namespace

DiagnosisReport ReportOf(const TargetOutcome& outcome) {
  DiagnosisReport report;
  report.status = outcome.status;
  report.error = outcome.error;
  if (outcome.status == Status::kDiagnosed) {
    report.markdown = RenderMarkdown(outcome.diagnosis);
    report.verdicts = VerdictLines(outcome.diagnosis);
  }
  return report;
}

std::string ReportJson(const DiagnosisReport& report) {
  json doc = {{"schema", kReportSchema},
              {"status", NameOf(report.status)},
              {"error", report.error},
              {"markdown", report.markdown},
              {"verdicts", report.verdicts}};
  return doc.dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
}

Expected<DiagnosisReport> ParseReportJson(std::string_view text) {
  json doc = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded() || !doc.is_object()) return Error{"not a JSON object"};
  if (Text(doc, "schema") != kReportSchema)
    return Error{"not a " + std::string(kReportSchema) + " report"};
  DiagnosisReport report;
  const std::string status = Text(doc, "status");
  bool known = false;
  for (const auto& [s, name] : kStatusNames) {
    if (name == status) {
      report.status = s;
      known = true;
    }
  }
  if (!known) return Error{"unknown status '" + status + "'"};
  report.error = Text(doc, "error");
  report.markdown = Text(doc, "markdown");
  report.verdicts = Text(doc, "verdicts");
  return report;
}

ReportDiagnoser InProcess(TargetDiagnoser diagnoser) {
  return [diagnoser = std::move(diagnoser)](const TargetRequest& request) {
    return ReportOf(diagnoser(request));
  };
}

}  // namespace jobmon::diagnose
