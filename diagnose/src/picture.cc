#include "jobmon/diagnose/picture.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <set>

#include "playbooks/kit.h"

namespace jobmon::diagnose {
namespace {

bool AllDigits(const std::string& text) {
  return !text.empty() && std::all_of(text.begin(), text.end(),
                                      [](unsigned char c) { return std::isdigit(c) != 0; });
}

// GPU "2" before GPU "10": numbers by value, then any other name.
bool GpuBefore(const std::string& a, const std::string& b) {
  const bool na = AllDigits(a) && a.size() < 10, nb = AllDigits(b) && b.size() < 10;
  if (na != nb) return na;
  if (na) return std::stol(a) < std::stol(b);
  return a < b;
}

// One line per GPU of one host's series, in GPU order.
std::vector<chart::Line> GpuLines(const std::vector<const Series*>& series) {
  std::vector<const Series*> sorted = series;
  std::stable_sort(sorted.begin(), sorted.end(), [](const Series* a, const Series* b) {
    return GpuBefore(a->Label("gpu"), b->Label("gpu"));
  });
  std::vector<chart::Line> lines;
  for (const Series* s : sorted) {
    const std::string gpu = s->Label("gpu");
    chart::Line line{gpu.empty() ? "GPU" : "GPU " + gpu, {}};
    line.points.reserve(s->samples.size());
    for (const Sample& sample : s->samples) line.points.push_back({sample.time, sample.value});
    lines.push_back(std::move(line));
  }
  return lines;
}

}  // namespace

TimeRange PictureSpan(const DiagnoseContext& context) {
  return context.job_range.seconds() > 0 ? context.job_range : context.tsdb_range;
}

double PictureStep(const DiagnoseContext& context) {
  // n points over a span at step s number at most span/s + 1.
  return StepFor(PictureSpan(context), context, static_cast<int>(chart::kMaxPointsPerLine) - 1);
}

std::string DiagnosisTitle(const Diagnosis& diagnosis) {
  const std::string& job = diagnosis.context.job;
  std::string title = AllDigits(job) ? "Job " + job : job;
  std::string verdicts;
  for (const PlaybookResult& p : diagnosis.playbooks) {
    verdicts += fmt::format("{}{} {}", verdicts.empty() ? "" : ", ", p.playbook,
                            p.verdict.empty() ? "undetermined" : p.verdict);
  }
  title += ": " + (verdicts.empty() ? std::string("no playbook ran") : verdicts);
  if (!diagnosis.tsdb_matches_log) title += " (wrong TSDB?)";
  return title;
}

std::vector<chart::Point> ExpectedLine(const DiagnoseContext& context, double to) {
  const TimeRange steady = playbook::SteadyRange(context);
  std::vector<const StepTime*> points;
  for (const StepTime& s : context.steps) {
    if (steady.Contains(s.time)) points.push_back(&s);
  }
  std::vector<double> seconds_per_step;
  for (size_t i = 1; i < points.size(); ++i) {
    const double dt = points[i]->time - points[i - 1]->time;
    const auto dstep = static_cast<double>(points[i]->step - points[i - 1]->step);
    if (dt > 0 && dstep > 0) seconds_per_step.push_back(dt / dstep);
  }
  if (seconds_per_step.empty()) return {};
  const double interval = playbook::Median(seconds_per_step);
  const StepTime& first = *points.front();
  if (interval <= 0 || to <= first.time) return {};
  const auto step = static_cast<double>(first.step);
  return {{first.time, step}, {to, step + (to - first.time) / interval}};
}

std::optional<double> StallSince(const DiagnoseContext& context) {
  const TriageFacts& t = context.triage;
  if (t.hang_start) return t.hang_start;
  const bool hung = t.primary_class == "hang" || t.status == "hanging";
  if (hung && !context.steps.empty()) return context.steps.back().time;
  return std::nullopt;
}

std::vector<std::string> NamedHosts(const Diagnosis& diagnosis) {
  std::vector<std::string> named;
  auto add = [&](const std::string& host) {
    if (!host.empty() && std::find(named.begin(), named.end(), host) == named.end())
      named.push_back(host);
  };
  for (const std::string& host : diagnosis.context.triage.accused_hosts) add(host);
  for (const PlaybookResult& p : diagnosis.playbooks) {
    if (p.root_cause) add(p.root_cause->host);
  }
  for (Severity severity : {Severity::kCritical, Severity::kWarning}) {
    for (const PlaybookResult& p : diagnosis.playbooks) {
      for (const Finding& f : p.anomalies) {
        if (f.severity == severity) add(f.host);
      }
    }
  }
  return named;
}

chart::Picture DiagnosisPicture(const Diagnosis& diagnosis, const std::vector<Series>& util,
                                const std::vector<Series>& power) {
  const DiagnoseContext& context = diagnosis.context;
  chart::Picture picture;
  picture.title = DiagnosisTitle(diagnosis);
  const TimeRange span = PictureSpan(context);
  picture.from = span.start;
  picture.to = span.end;
  for (const StepTime& s : context.steps)
    picture.steps.push_back({s.time, static_cast<double>(s.step)});
  picture.expected = ExpectedLine(context, picture.to);
  if (auto since = StallSince(context); since && *since < picture.to)
    picture.stall_since = std::max(*since, picture.from);

  auto util_by_host = playbook::ByHost(util);
  auto power_by_host = playbook::ByHost(power);
  std::vector<std::string> hosts = NamedHosts(diagnosis);
  std::set<std::string> others;
  for (const std::string& host : playbook::JobHosts(context)) others.insert(host);
  for (const auto& [host, series] : util_by_host) others.insert(host);
  for (const auto& [host, series] : power_by_host) others.insert(host);
  others.erase("");  // a series without a host label belongs to no panel
  for (const std::string& host : others) {
    if (std::find(hosts.begin(), hosts.end(), host) == hosts.end()) hosts.push_back(host);
  }
  for (const std::string& host : hosts) {
    chart::HostPanel panel{host, {}, {}};
    if (auto it = util_by_host.find(host); it != util_by_host.end())
      panel.utilization = GpuLines(it->second);
    if (auto it = power_by_host.find(host); it != power_by_host.end())
      panel.power = GpuLines(it->second);
    picture.hosts.push_back(std::move(panel));
  }
  chart::Bound(picture);
  return picture;
}

}  // namespace jobmon::diagnose
