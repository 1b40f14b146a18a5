#include <fmt/format.h>

#include <cmath>

#include "compare/compare.h"
#include "jobmon/common/iso_time.h"
#include "jobmon/common/terminal_text.h"
#include "jobmon/diagnose/report.h"

namespace jobmon::diagnose {
namespace {

std::string Value(const Finding& f) {
  if (!f.value) return "";
  std::string unit = f.unit == "count" ? "" : f.unit;
  return fmt::format("{:.4g}{}{}", *f.value, unit.empty() || unit == "%" ? "" : " ", unit);
}

// "[critical] ecc-uncorrectable on node1 GPU 3 (mlx5_0) at T: text".
std::string FindingLine(const Finding& f) {
  std::string where;
  if (!f.host.empty()) where += " on " + f.host;
  if (!f.gpu.empty()) where += " GPU " + f.gpu;
  if (!f.device.empty()) where += " (" + f.device + ")";
  std::string line =
      fmt::format("[{}] `{}`{}", ToString(f.severity), f.code.empty() ? f.family : f.code, where);
  if (f.time) line += " from " + FormatIsoUtc(*f.time);
  if (f.value) line += fmt::format(" ({})", Value(f));
  if (!f.text.empty()) line += ": " + f.text;
  return line;
}

// A table cell: a `|` would end the cell, a newline the row.
std::string Cell(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '|')
      out += "\\|";
    else if (c == '\n')
      out += ' ';
    else
      out += c;
  }
  return out.empty() ? "-" : out;
}

std::string HostList(const std::vector<std::string>& hosts) {
  std::string out;
  for (const auto& h : hosts) out += (out.empty() ? "" : ", ") + h;
  return out;
}

std::string Header(const Diagnosis& d, const std::string& analysis_type, const TimeRange& window) {
  std::string md = fmt::format("## TSDB Diagnosis: {}\n", d.context.job);
  md += fmt::format("**Analysis type:** {}\n", analysis_type);
  md += fmt::format("**Time window:** {}\n", FormatRange(window));
  md += fmt::format("**Nodes:** {} ({})\n", d.context.hosts.size(), HostList(d.context.hosts));
  return md;
}

std::string RenderPlaybook(const Diagnosis& d, const PlaybookResult& p) {
  std::string md = Header(d, p.analysis_type.empty() ? p.playbook : p.analysis_type,
                          p.window.value_or(d.context.window));
  md += fmt::format("**Verdict:** `{}`\n\n", p.verdict.empty() ? "undetermined" : p.verdict);

  md += "### Findings\n";
  md += (p.summary.empty() ? "No summary." : p.summary) + "\n";
  if (p.root_cause) md += "\nRoot cause (earliest anomaly): " + FindingLine(*p.root_cause) + "\n";
  if (!p.chain.empty()) {
    md += "\nWhat followed, in time order:\n";
    for (size_t i = 0; i < p.chain.size(); ++i)
      md += fmt::format("{}. {}\n", i + 1, FindingLine(p.chain[i]));
  }
  md += "\n### Metric evidence\n";
  if (p.evidence.empty()) md += "No metric tables (see the findings and errors).\n";
  for (const auto& table : p.evidence) {
    md += fmt::format("#### {}\n", table.title);
    if (!table.query.empty()) md += fmt::format("Query: `{}`\n\n", table.query);
    if (table.rows.empty()) {
      md += "No series answered.\n\n";
      continue;
    }
    md += "| Host | GPU | Value | Interpretation |\n|------|-----|-------|----------------|\n";
    for (const auto& row : table.rows) {
      md += fmt::format("| {} | {} | {} | {} |\n", Cell(row.host), Cell(row.gpu), Cell(row.value),
                        Cell(row.interpretation));
    }
    md += "\n";
  }
  md += "### Anomalies detected\n";
  if (p.anomalies.empty()) md += "None\n";
  for (const auto& f : p.anomalies) md += "- " + FindingLine(f) + "\n";
  md += "\n### Correlation with triage\n";
  md += (p.correlation.empty() ? "No triage to correlate with." : p.correlation) + "\n\n";
  md += "### Recommended next steps\n";
  if (p.next_steps.empty()) md += "None.\n";
  for (size_t i = 0; i < p.next_steps.size(); ++i)
    md += fmt::format("{}. {}\n", i + 1, p.next_steps[i]);
  if (!p.errors.empty()) {
    md += "\n### Query errors (the verdict is partial)\n";
    for (const auto& e : p.errors) md += "- " + e + "\n";
  }
  return md + "\n";
}

std::string RenderObservability(const Diagnosis& d) {
  std::string md = "### Observability\n";
  md += fmt::format("Source: {}\n\n", d.source.empty() ? "unknown" : d.source);
  if (d.central_store)
    md += fmt::format("The cluster's central store{}: every query confined to {{{}}}.\n\n",
                      d.central_store->fallback ? " (the job's archive is gone)" : "",
                      d.central_store->matchers);
  if (!d.tsdb_check.empty())
    md += fmt::format("tb_step cross-check: {}{}\n\n",
                      d.tsdb_matches_log ? "" : "**MISMATCH (wrong TSDB?)** ", d.tsdb_check);
  const auto& o = d.observability;
  if (o.problems.empty()) {
    md += "No broken data found: every expected host and family has data.\n";
  } else {
    for (const auto& f : o.problems) md += "- " + FindingLine(f) + "\n";
  }
  if (!o.untrusted.empty()) {
    md += "\nTime ranges not to trust:\n\n";
    md += "| Host | Family | From | To | Reason |\n|------|--------|------|----|--------|\n";
    for (const auto& u : o.untrusted) {
      md += fmt::format("| {} | {} | {} | {} | {} |\n", Cell(u.host), Cell(u.family),
                        FormatIsoUtc(u.range.start), FormatIsoUtc(u.range.end), Cell(u.reason));
    }
  }
  if (!d.warnings.empty()) {
    md += "\nWarnings:\n";
    for (const auto& w : d.warnings) md += "- " + w + "\n";
  }
  return md;
}

}  // namespace

std::string FormatSeconds(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) return "?";
  auto s = static_cast<long long>(std::llround(seconds));
  if (s < 60) return fmt::format("{}s", s);
  if (s < 3600) return fmt::format("{}m{:02}s", s / 60, s % 60);
  return fmt::format("{}h{:02}m", s / 3600, (s % 3600) / 60);
}

std::string FormatRange(const TimeRange& range) {
  if (range.start == 0 && range.end == 0) return "unknown";
  return fmt::format("{} to {} ({})", FormatIsoUtc(range.start), FormatIsoUtc(range.end),
                     FormatSeconds(range.seconds()));
}

std::string VerdictLines(const Diagnosis& d) {
  std::string out;
  if (!d.tsdb_matches_log)
    out += "TSDB does not match the log (wrong TSDB?): " + d.tsdb_check + "\n";
  for (const auto& p : d.playbooks) {
    out += fmt::format("{}: {}", p.playbook, p.verdict.empty() ? "undetermined" : p.verdict);
    if (p.root_cause) out += " (root cause: " + FindingLine(*p.root_cause) + ")";
    out += "\n";
  }
  if (!d.observability.problems.empty())
    out += fmt::format("observability: {} problem(s), first: {}\n", d.observability.problems.size(),
                       FindingLine(d.observability.problems.front()));
  return out;
}

std::string RenderMarkdown(const Diagnosis& d) {
  std::string md;
  // Without a playbook (a failed selection) the header still says what was read.
  if (d.playbooks.empty() && !d.comparison) md += Header(d, "none", d.context.window) + "\n";
  for (const auto& p : d.playbooks) md += RenderPlaybook(d, p);
  if (d.comparison) md += RenderComparisonMarkdown(*d.comparison);
  md += RenderObservability(d);
  // Hosts, labels, findings and log lines are a job's user's text, and the
  // report is read on an admin's terminal: no control character of theirs.
  return TerminalLines(md);
}

}  // namespace jobmon::diagnose
