#include <fmt/format.h>

#include "jobmon/diagnose/picture.h"
#include "jobmon/diagnose/report.h"

namespace jobmon::diagnose {
namespace {

std::string Subtitle(const Diagnosis& d) {
  const TriageFacts& t = d.context.triage;
  std::string triage = t.primary_class.empty() ? "no failure class" : t.primary_class;
  if (!t.status.empty()) triage += " (" + t.status + ")";
  return fmt::format("Job time {}; triage: {}; {} host(s)", FormatRange(d.context.job_range),
                     triage, d.context.hosts.size());
}

// What the chart shows, in words: its rules are not visible in the image.
std::string Caption(const chart::Picture& picture) {
  std::string caption =
      "Training steps against the expected line (the median seconds per step of the steady "
      "steps, from the first steady step)";
  if (picture.stall_since) caption += "; no progress from the last step to the job's end (shaded)";
  caption +=
      "; each host's GPU utilisation (solid) and power (dashed), the hosts the diagnosis names "
      "first";
  if (picture.hosts_left_out > 0)
    caption += fmt::format("; {} more host(s) not shown", picture.hosts_left_out);
  return caption + ".";
}

}  // namespace

chart::HtmlPage HtmlReport(const Diagnosis& diagnosis, const Expected<std::string>& png) {
  chart::HtmlPage page;
  page.title = DiagnosisTitle(diagnosis);
  page.subtitle = Subtitle(diagnosis);
  std::string chart_note;
  if (png.ok() && diagnosis.picture) {
    page.images.push_back({Caption(*diagnosis.picture), png.value()});
  } else {
    chart_note = "No chart: " +
                 (png.ok() ? std::string("the diagnosis made no picture") : png.error().message) +
                 ". The report below is complete without it.\n";
  }
  for (const std::string& e : diagnosis.picture_errors)
    chart_note += "Lines missing from the chart: " + e + "\n";
  if (!chart_note.empty()) page.sections.push_back({"Chart", chart_note});
  const std::string verdicts = VerdictLines(diagnosis);
  page.sections.push_back({"Verdicts", verdicts.empty() ? "No playbook ran.\n" : verdicts});
  page.sections.push_back({"Report", RenderMarkdown(diagnosis)});
  return page;
}

}  // namespace jobmon::diagnose
