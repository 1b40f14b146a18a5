// The comparison in docs/diagnose.md's step-8 report format, and as JSON for
// `jobmon diagnose --compare --json`.

#include <fmt/format.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "compare/compare.h"

namespace jobmon::diagnose {

namespace {

// Table cells hold no raw '|' or newline.
std::string Cell(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (c == '|') {
      out += "\\|";
    } else if (c == '\n') {
      out += ' ';
    } else {
      out += c;
    }
  }
  return out.empty() ? "-" : out;
}

std::string Value(const std::optional<double>& v, const std::optional<double>& noise,
                  const std::string& unit) {
  if (!v) return "-";
  std::string out = std::fabs(*v) >= 1e6 || (*v != 0 && std::fabs(*v) < 1e-3)
                        ? fmt::format("{:.3g}", *v)
                        : fmt::format("{:.4g}", *v);
  if (!unit.empty()) out += " " + unit;
  if (noise && *noise > 0) out += fmt::format(" (±{:.2g})", *noise);
  return out;
}

nlohmann::json Optional(const std::optional<double>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

}  // namespace

std::string RenderComparisonMarkdown(const Comparison& c) {
  std::string out =
      fmt::format("## Multi-Job Comparison: {} vs {}\n\n", Cell(c.job_a), Cell(c.job_b));
  out += "### Config differences\n\n";
  if (c.config_differences.empty()) {
    out += "None: the log headers carry the same configuration.\n\n";
  } else {
    out += fmt::format("| Parameter | Job A ({}) | Job B ({}) |\n", Cell(c.job_a), Cell(c.job_b));
    out += "|-----------|-------|-------|\n";
    for (const auto& d : c.config_differences) {
      out += fmt::format("| {} | {} | {} |\n", Cell(d.parameter), Cell(d.a), Cell(d.b));
    }
    out += "\n";
  }
  if (c.overlap_first_step) {
    out += fmt::format("### Overlapping step range: {} to {}\n\n", *c.overlap_first_step,
                       *c.overlap_last_step);
    out += fmt::format(
        "{} warmup steps after the later job's first step skipped; checkpoint windows "
        "excluded.\n\n",
        c.warmup_steps_skipped);
  } else {
    out += "### Overlapping step range: none\n\nNo common training steps: whole jobs compared.\n\n";
  }
  out += "### Metric comparison (steady-state averages over overlapping steps)\n\n";
  if (c.metrics.empty()) {
    out += "No metric found in both TSDBs.\n\n";
  } else {
    out += "| Metric | Job A | Job B | Delta | Likely cause |\n";
    out += "|--------|-------|-------|-------|--------------|\n";
    for (const auto& m : c.metrics) {
      std::string delta = m.delta.empty() ? "-" : m.delta;
      if (m.diverges) delta = "**" + delta + "**";
      out += fmt::format("| `{}` | {} | {} | {} | {} |\n", Cell(m.metric),
                         Value(m.a, m.noise_a, m.unit), Value(m.b, m.noise_b, m.unit), delta,
                         Cell(m.likely_cause));
    }
    out += "\n";
  }
  out += "### Root cause\n\n";
  if (c.root_cause) {
    out += fmt::format("**{}** ({}): {}\n\n", c.root_cause->code, c.root_cause->family,
                       c.root_cause->text);
  }
  out += c.summary + "\n";
  if (!c.errors.empty()) {
    out += "\nPartial comparison:\n";
    for (const auto& e : c.errors) out += "- " + e + "\n";
  }
  return out;
}

nlohmann::json ComparisonToJson(const Comparison& c) {
  nlohmann::json j;
  j["job_a"] = c.job_a;
  j["job_b"] = c.job_b;
  j["config_differences"] = nlohmann::json::array();
  for (const auto& d : c.config_differences) {
    j["config_differences"].push_back({{"parameter", d.parameter}, {"a", d.a}, {"b", d.b}});
  }
  j["overlap"] = c.overlap_first_step
                     ? nlohmann::json{{"first_step", *c.overlap_first_step},
                                      {"last_step", *c.overlap_last_step},
                                      {"warmup_steps_skipped", c.warmup_steps_skipped}}
                     : nlohmann::json(nullptr);
  auto range = [](const std::optional<TimeRange>& r) {
    return r ? nlohmann::json{{"start", r->start}, {"end", r->end}} : nlohmann::json(nullptr);
  };
  j["range_a"] = range(c.range_a);
  j["range_b"] = range(c.range_b);
  j["metrics"] = nlohmann::json::array();
  for (const auto& m : c.metrics) {
    j["metrics"].push_back({{"metric", m.metric},
                            {"contention_source", m.contention_source},
                            {"unit", m.unit},
                            {"a", Optional(m.a)},
                            {"b", Optional(m.b)},
                            {"noise_a", Optional(m.noise_a)},
                            {"noise_b", Optional(m.noise_b)},
                            {"delta", m.delta},
                            {"diverges", m.diverges},
                            {"explained_by_config", m.explained_by_config},
                            {"likely_cause", m.likely_cause}});
  }
  if (c.root_cause) {
    const Finding& f = *c.root_cause;
    j["root_cause"] = {{"code", f.code},
                       {"severity", ToString(f.severity)},
                       {"family", f.family},
                       {"host", f.host},
                       {"value", Optional(f.value)},
                       {"unit", f.unit},
                       {"time", Optional(f.time)},
                       {"text", f.text}};
  } else {
    j["root_cause"] = nullptr;
  }
  j["summary"] = c.summary;
  j["errors"] = c.errors;
  return j;
}

}  // namespace jobmon::diagnose
