#include "compare/compare.h"
#include "jobmon/diagnose/report.h"

namespace jobmon::diagnose {
namespace {

using nlohmann::json;

json Opt(const std::optional<double>& v) { return v ? json(*v) : json(); }
json Opt(const std::optional<int64_t>& v) { return v ? json(*v) : json(); }
json Opt(const std::optional<std::string>& v) { return v ? json(*v) : json(); }
json OrNull(const std::string& s) { return s.empty() ? json() : json(s); }

json Range(const TimeRange& r) { return {{"start", r.start}, {"end", r.end}}; }

json Triage(const TriageFacts& t) {
  return {{"primary_class", OrNull(t.primary_class)},
          {"status", OrNull(t.status)},
          {"crash_time", Opt(t.crash_time)},
          {"hang_start", Opt(t.hang_start)},
          {"heartbeat_stop", Opt(t.heartbeat_stop)},
          {"heartbeat_timeout_seconds", Opt(t.heartbeat_timeout_seconds)},
          {"accused_hosts", t.accused_hosts},
          {"coordinator_host", Opt(t.coordinator_host)},
          {"last_step", Opt(t.last_step)},
          {"checkpoint_period", Opt(t.checkpoint_period)}};
}

json Context(const DiagnoseContext& c) {
  json checkpoints = json::array();
  for (const auto& w : c.checkpoints)
    checkpoints.push_back({{"step", w.step}, {"start", w.range.start}, {"end", w.range.end}});
  json steps = nullptr;
  if (!c.steps.empty()) {
    steps = {{"count", c.steps.size()},
             {"first", {{"step", c.steps.front().step}, {"time", c.steps.front().time}}},
             {"last", {{"step", c.steps.back().step}, {"time", c.steps.back().time}}}};
  }
  return {{"tsdb_range", Range(c.tsdb_range)},
          {"job_range", Range(c.job_range)},
          {"window", Range(c.window)},
          {"hosts", c.hosts},
          {"expected_hosts", c.expected_hosts},
          {"families", c.families},
          {"steps", steps},
          {"checkpoints", checkpoints},
          {"triage", Triage(c.triage)},
          {"scrape_interval_seconds", c.scrape_interval_seconds},
          {"rate_window_seconds", c.rate_window_seconds}};
}

json Findings(const std::vector<Finding>& findings) {
  json out = json::array();
  for (const auto& f : findings) out.push_back(ToJson(f));
  return out;
}

json Playbook(const PlaybookResult& p, const TimeRange& default_window) {
  json evidence = json::array();
  for (const auto& t : p.evidence) {
    json rows = json::array();
    for (const auto& r : t.rows)
      rows.push_back({{"host", r.host},
                      {"gpu", r.gpu},
                      {"value", r.value},
                      {"interpretation", r.interpretation}});
    evidence.push_back({{"title", t.title}, {"query", t.query}, {"rows", rows}});
  }
  return {{"playbook", p.playbook},
          {"analysis_type", p.analysis_type},
          {"verdict", p.verdict.empty() ? "undetermined" : p.verdict},
          {"summary", p.summary},
          {"window", Range(p.window.value_or(default_window))},
          {"evidence", evidence},
          {"anomalies", Findings(p.anomalies)},
          {"root_cause", p.root_cause ? ToJson(*p.root_cause) : json()},
          {"chain", Findings(p.chain)},
          {"correlation", p.correlation},
          {"next_steps", p.next_steps},
          {"errors", p.errors}};
}

}  // namespace

json ToJson(const Finding& f) {
  return {{"code", f.code},        {"severity", ToString(f.severity)},
          {"family", f.family},    {"host", OrNull(f.host)},
          {"gpu", OrNull(f.gpu)},  {"device", OrNull(f.device)},
          {"value", Opt(f.value)}, {"unit", f.unit},
          {"time", Opt(f.time)},   {"text", f.text}};
}

json ToJson(const Diagnosis& d) {
  json untrusted = json::array();
  for (const auto& u : d.observability.untrusted)
    untrusted.push_back({{"host", OrNull(u.host)},
                         {"family", OrNull(u.family)},
                         {"start", u.range.start},
                         {"end", u.range.end},
                         {"reason", u.reason}});
  json playbooks = json::array();
  for (const auto& p : d.playbooks) playbooks.push_back(Playbook(p, d.context.window));
  return {{"schema", kDiagnoseJsonSchema},
          {"job", d.context.job},
          {"source", d.source},
          {"central_store", d.central_store ? json{{"url", d.central_store->url},
                                                   {"matchers", d.central_store->matchers},
                                                   {"fallback", d.central_store->fallback}}
                                            : json()},
          {"context", Context(d.context)},
          {"tsdb_check", {{"matches_log", d.tsdb_matches_log}, {"text", d.tsdb_check}}},
          {"observability",
           {{"problems", Findings(d.observability.problems)}, {"untrusted", untrusted}}},
          {"playbooks", playbooks},
          {"comparison", d.comparison ? ComparisonToJson(*d.comparison) : json()},
          {"warnings", d.warnings}};
}

}  // namespace jobmon::diagnose
