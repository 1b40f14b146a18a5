// The Monitor's incidents: what a stall or a slowdown opens with; opened, closed, sent.
#include <fmt/format.h>

#include <algorithm>

#include "evidence/evidence_feed.h"
#include "jobmon/chart/gnuplot_chart.h"
#include "jobmon/monitor/divergence.h"
#include "jobmon/monitor/incident_alert.h"
#include "jobmon/monitor/incident_picture.h"
#include "jobmon/monitor/incident_policy.h"
#include "jobmon/monitor/monitor.h"
#include "jobmon/monitor/rank_waits.h"
#include "jobmon/monitor/stall_classifier.h"

namespace jobmon::monitor {
namespace {

std::string Seconds(double s) { return fmt::format("{:.1f}", s); }

}  // namespace

bool Monitor::EndLooksLikeStall(Tracked& t, const std::optional<StallClassification>& stall,
                                double now) {
  // COMPLETING: the steps are over and the epilog runs (archiving takes a
  // while); the log and the exporters stop as in a hang.
  if (t.record.slurm_state.starts_with("COMPLETING")) return true;
  // While Slurm does not answer, a job that ended looks like the death of
  // every node (its epilog stopped every exporter); Slurm's answer decides
  // (NODE_FAIL, or an end). Some hosts alive and others gone stays a stall.
  const double recovery_grace = std::max(60.0, 3 * config_.slurm_poll_interval);
  if (!stall || !(outage_.unreachable() || outage_.Recovering(now, recovery_grace))) return false;
  if (t.window) {
    const StallEvidence now_seen = t.window->Evidence(now, 0, 0, config_.stale_after);
    if (!now_seen.hosts.empty() &&
        std::all_of(now_seen.hosts.begin(), now_seen.hosts.end(), [&](const HostEvidence& h) {
          return !h.exporter_up || h.seconds_since_seen > config_.stale_after;
        })) {
      return true;
    }
  }
  // Nor can Slurm run the job's epilog: the exporters stay up. The log's
  // own end (a launcher's summary, the last planned step) says it finished.
  auto report = TriageLog(t, "", now);
  return report && report->status == triage::JobStatus::kCompleted;
}

StallClassification Monitor::ClassifyStallOf(const Tracked& t, const ProgressState& state,
                                             double now) const {
  std::string stall =
      fmt::format("no step for {}s (threshold {}s: {}); last step {}", Seconds(state.idle_seconds),
                  Seconds(state.threshold_seconds), state.threshold_reason,
                  state.last_step ? std::to_string(*state.last_step) : "none");
  // Which progress was followed, and how sure that makes the verdict: a
  // pulse (the job's periodic output, no progress line) is weaker evidence.
  if (t.progress->profile() == triage::StepProfile::kPulse) {
    stall += "; lower confidence: no progress line, followed the job's periodic output (" +
             t.progress->progress_source() + ")";
  } else if (t.progress->profile() == triage::StepProfile::kLearned) {
    stall += "; followed the job's learned progress line (" + t.progress->progress_source() + ")";
  }
  StallClassification c;
  if (!state.last_step) {
    c.klass = "hang/startup";
    c.summary = "no training step within the startup grace: " + stall;
  } else if (const std::string stale = t.window ? feed_->Stale(t.record.job_id, now) : "";
             !stale.empty()) {
    c.klass = "hang";
    c.summary = "training stopped; no system evidence (" + stale + "): " + stall;
  } else if (t.window && !t.window->hosts().empty()) {
    const auto [from, until] = TrainingSpan(t, state, now);
    c = ClassifyStall(t.window->Evidence(now, from, until, config_.stale_after));
    c.summary += "; " + stall;
  } else {
    c.klass = "hang";
    c.summary = "training stopped; no system evidence (job without --diag): " + stall;
  }
  return c;
}

Monitor::NewIncident Monitor::StallIncident(Tracked& t, const ProgressState& state,
                                            const StallClassification& stall, double now) {
  NewIncident incident{stall.klass, stall.summary, stall.evidence, stall.hosts, std::nullopt};
  // Which rank stopped first, where ranks print their own steps; with the
  // exporters' task labels, on which node, and what each rank waits on.
  const triage::RankProgress& ranks = t.progress->ranks();
  std::vector<HostEvidence> hosts;
  if (ranks.ranks().size() > 1 && t.window && feed_->Stale(t.record.job_id, now).empty()) {
    hosts = t.window->Evidence(now, 0, 0, config_.stale_after).hosts;
  }
  const RankWaits waits = DescribeRankWaits(ranks, hosts);
  std::vector<std::string> rank_lines;
  if (!waits.stopped.empty()) {
    incident.summary += "; " + waits.stopped;
    rank_lines.push_back("ranks: " + waits.stopped);
    // Where the class names no host, the node of the rank that stopped
    // first is the one the incident is about (recovery excludes it).
    if (incident.hosts.empty()) incident.hosts = waits.stopped_hosts;
  } else if (ranks.folded()) {
    rank_lines.push_back("ranks: " + std::string(triage::RankProgress::kFoldedNote));
  } else if (ranks.ranks().size() > 1) {
    rank_lines.push_back(fmt::format("ranks: all {} ranks printing steps stopped at step {}",
                                     ranks.ranks().size(), ranks.ranks().begin()->second.step));
  }
  for (const std::string& wait : waits.waits) rank_lines.push_back("ranks: " + wait);
  // No rank named (only rank 0 prints, or all stopped at once): the hosts'
  // own evidence dates who left training first (divergence.h).
  if (waits.stopped.empty() && t.window && feed_->Stale(t.record.job_id, now).empty()) {
    const auto [from, until] = TrainingSpan(t, state, now);
    const std::string first =
        DescribeDivergence(FirstDivergence(*t.window, from, until, now, config_.stale_after),
                           t.window->hosts().size());
    if (!first.empty()) {
      incident.summary += "; " + first;
      rank_lines.push_back(first);
    }
  }
  incident.evidence.insert(incident.evidence.begin(), rank_lines.begin(), rank_lines.end());
  const auto& tail = t.progress->tail();
  size_t from = tail.size() > 5 ? tail.size() - 5 : 0;
  for (size_t i = from; i < tail.size(); ++i) incident.evidence.push_back("log tail: " + tail[i]);
  // The alert carries the triage of the log as it stands (a bounded read of
  // its head and tail), so whoever is paged sees the job's own lines.
  incident.report = TriageLog(t, t.record.slurm_state, now, &state);
  return incident;
}

Monitor::NewIncident Monitor::SlowdownIncident(const ProgressState& state) const {
  return {kSlowdownClass,
          fmt::format("steps take {:.2f}x as long as early in the run (median {:.3g}s over the "
                      "last {}s, {:.3g}s then): throughput degraded, the job is not hung",
                      *state.slowdown, *state.recent_interval,
                      Seconds(config_.slowdown.window_seconds), *state.baseline_interval),
          {fmt::format("recent median step {:.3f}s over {} steps in the last {}s",
                       *state.recent_interval, state.recent_steps,
                       Seconds(config_.slowdown.window_seconds)),
           fmt::format("baseline median step {:.3f}s over the first {} steady steps",
                       *state.baseline_interval, state.baseline_steps),
           fmt::format("last step {} at {:.0f}s ago", state.last_step.value_or(-1),
                       state.idle_seconds)},
          {},
          std::nullopt};
}

void Monitor::Open(Tracked& t, NewIncident opened_as, double now) {
  IncidentRecord incident;
  incident.job_id = t.record.job_id;
  incident.klass = std::move(opened_as.klass);
  incident.state = "open";
  incident.opened_at = now;
  incident.summary = std::move(opened_as.summary);
  incident.evidence = std::move(opened_as.evidence);
  incident.hosts = std::move(opened_as.hosts);
  auto opened = store_.OpenIncident(incident);
  if (!opened) {
    log_.Error("state_store", {{"op", "open incident"}, {"error", opened.error().message}});
    return;
  }
  auto [id, created] = *opened;
  incident.id = id;
  if (!created) {
    // The store already had one open (a restart): that one stands.
    if (auto existing = store_.OpenIncidentOf(t.record.job_id); existing && *existing) {
      t.open = **existing;
    }
    return;
  }
  t.open = incident;
  ++stats_.incidents_opened[incident.klass];
  log_.Warn("incident_opened", {{"job", std::to_string(t.record.job_id)},
                                {"incident", std::to_string(id)},
                                {"class", incident.klass},
                                {"summary", incident.summary}});
  Send(t, incident, "firing", now, opened_as.report ? &*opened_as.report : nullptr);
}

void Monitor::Close(Tracked& t, const std::string& reason, double now) {
  if (!t.open) return;
  Check(store_.CloseIncident(t.open->id, now, reason), "close incident");
  IncidentRecord closed = *t.open;
  closed.state = "closed";
  closed.closed_at = now;
  closed.close_reason = reason;
  t.open.reset();
  log_.Info("incident_closed", {{"job", std::to_string(t.record.job_id)},
                                {"incident", std::to_string(closed.id)},
                                {"class", closed.klass},
                                {"reason", reason},
                                {"after_s", Seconds(now - closed.opened_at)}});
  Send(t, closed, "resolved", now, nullptr);
}

void Monitor::Send(const Tracked& t, const IncidentRecord& incident, const std::string& status,
                   double at, const triage::TriageReport* report) {
  alerts::Alert alert =
      BuildAlert({config_.cluster, t.tunnel_command}, t.record, incident, status, at, report);
  if (status == "firing") alert.chart_png = DrawChart(t, incident, alerts::Title(alert), at);
  Notify(alert);
}

std::string Monitor::DrawChart(const Tracked& t, const IncidentRecord& incident,
                               const std::string& title, double now) {
  if (config_.gnuplot.empty() || !t.progress) return "";
  const chart::Picture picture =
      IncidentPicture(title, t.progress->trail(), t.progress->Evaluate(now), t.window.get(),
                      incident.hosts, t.record.start_time.value_or(t.record.first_seen), now);
  // Bounded by its deadline: a firing is rare, and its alert waits for it.
  chart::ChartOptions options;
  options.gnuplot = config_.gnuplot;
  options.timeout = std::chrono::milliseconds(5000);
  auto png = chart::RenderPng(picture, options);
  if (!png) {
    ++stats_.chart_failures;
    log_.Warn("chart_failed", {{"job", std::to_string(t.record.job_id)},
                               {"incident", std::to_string(incident.id)},
                               {"error", png.error().message}});
    return "";
  }
  Check(store_.SaveIncidentChart(incident.id, *png), "save incident chart");
  return std::move(*png);
}

}  // namespace jobmon::monitor
