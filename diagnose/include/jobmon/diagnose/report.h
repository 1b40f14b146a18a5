#pragma once
// Rendering a Diagnosis: Markdown in docs/diagnose.md, "Report format"
// (one block per playbook, then what the data cannot be trusted for),
// JSON with a versioned schema (kDiagnoseJsonSchema, docs/diagnose-json.md),
// and the HTML page of `--html` (chart/'s self-contained page).

#include <nlohmann/json.hpp>
#include <string>

#include "jobmon/chart/html_report.h"
#include "jobmon/common/expected.h"
#include "jobmon/diagnose/result.h"

namespace jobmon::diagnose {

std::string RenderMarkdown(const Diagnosis& diagnosis);
nlohmann::json ToJson(const Diagnosis& diagnosis);
// The `--html` page: its title (picture.h's DiagnosisTitle), the chart
// `png` drawn from diagnosis.picture, or a line saying why there is none
// (`png`'s error), then the verdicts and the Markdown report as sections.
chart::HtmlPage HtmlReport(const Diagnosis& diagnosis, const Expected<std::string>& png);

// The pieces, shared with the comparison's rendering and the monitor's alert.
nlohmann::json ToJson(const Finding& finding);
// "12m30s", "3h02m", "45s".
std::string FormatSeconds(double seconds);
// "2026-11-22T13:59:09Z to 2026-11-22T14:11:39Z (12m30s)".
std::string FormatRange(const TimeRange& range);
// One line per playbook, "hang: busy-wait-hang (root cause: ...)", for alerts.
std::string VerdictLines(const Diagnosis& diagnosis);

}  // namespace jobmon::diagnose
