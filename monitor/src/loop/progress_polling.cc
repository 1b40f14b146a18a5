// Each followed job polled: its log read as its user, its progress and heartbeat judged, saved.
#include <algorithm>

#include "evidence/evidence_feed.h"
#include "jobmon/common/metric_names.h"
#include "jobmon/monitor/heartbeat_classifier.h"
#include "jobmon/monitor/incident_policy.h"
#include "jobmon/monitor/monitor.h"
#include "loop/monitor_internal.h"

namespace jobmon::monitor {

void Monitor::PollLogs(double now) {
  for (auto& [id, t] : jobs_) {
    if (!t.ended) PollLog(t, now);
  }
}

void Monitor::PollLog(Tracked& t, double now) {
  if (!t.user) return;  // never read a job's log with more privilege than its user has
  if (t.log_polled_in == cycle_number_) return;  // read already this cycle
  t.log_polled_in = cycle_number_;
  if (auto polled = t.progress->Poll(now); !polled) {
    WarnOnce(t, "log_unreadable", polled.error().message);
  }
}

std::pair<double, double> Monitor::TrainingSpan(const Tracked& t, const ProgressState& state,
                                                double fallback_until) const {
  const double until = state.last_step_time.value_or(fallback_until);
  return {t.progress->first_step_time().value_or(until - config_.window_seconds), until};
}

void Monitor::PollJob(Tracked& t, double now) {
  // Without the job's user nothing of it can be read, so nothing can be judged.
  if (!t.user) return;
  PollLog(t, now);
  if (t.window) {
    if (auto tb = t.window->LatestOf(metric_names::kTbStep);
        tb && tb->t >= now - config_.stale_after) {
      t.progress->OnTensorBoardStep(static_cast<int64_t>(tb->value), tb->t);
    }
  }
  if (t.progress->heartbeat_seen_at() && !t.heartbeat_handled) OnHeartbeat(t, now);
  const ProgressState state = t.progress->Evaluate(now);
  std::optional<StallClassification> stall;
  if (state.phase == Phase::kStalled) stall = ClassifyStallOf(t, state, now);
  const IncidentDecision decision = DecideOnProgress(
      state, FactsOf(t.open), stall ? stall->klass : std::string(), config_.slowdown.factor);
  if (decision.closes()) Close(t, decision.close_reason, now);
  if (decision.opens() && EndLooksLikeStall(t, stall, now)) {
    WarnOnce(t, "stall_not_raised",
             "the job is ending in Slurm (COMPLETING), or it looks ended (every host gone, or "
             "its log's own end) while Slurm does not answer or has just come back: its end, "
             "not a hang, until Slurm says otherwise");
  } else if (decision.opens()) {
    Open(t,
         decision.klass == kSlowdownClass ? SlowdownIncident(state)
                                          : StallIncident(t, state, *stall, now),
         now);
  }
  SaveProgress(t, now);
}

void Monitor::OnHeartbeat(Tracked& t, double now) {
  t.heartbeat_handled = true;
  const double accused_at = *t.progress->heartbeat_seen_at();
  HeartbeatInput in;
  in.accused_at = accused_at;
  in.timeout = t.progress->heartbeat_timeout().value_or(config_.heartbeat_timeout);
  auto report = TriageLog(t, t.record.slurm_state, now);
  if (report && report->heartbeat) {
    in.checklist = report->heartbeat;
    for (const auto& [task, host] : report->heartbeat->hosts) in.accused_hosts.push_back(host);
  }
  ProgressState state = t.progress->Evaluate(now);
  if (t.window && !t.window->hosts().empty() && feed_->Stale(t.record.job_id, now).empty()) {
    const auto [from, until] = TrainingSpan(t, state, accused_at);
    // Up to the accusation a job training on pace was scraped only once a
    // healthy interval (scrape_cadence.h), and by the time its line is read
    // the epilog may be stopping the exporters and its Prometheus: the last
    // scrape before each moment counts within that interval more. A host
    // that really died stops the job's progress long before the
    // coordinator's timeout, so its scrapes were every cycle by then, and
    // their failures say so (a failed scrape is never stale).
    const double stale_after = config_.stale_after + feed_->SampleGap();
    in.at_silence = t.window->Evidence(accused_at - in.timeout, from, until, stale_after);
    in.at_accusation = t.window->Evidence(accused_at, from, until, stale_after);
  }
  HeartbeatVerdict verdict = ClassifyHeartbeat(in);
  const IncidentDecision decision = DecideOnHeartbeat(FactsOf(t.open), verdict.klass);
  if (decision.opens()) {
    Open(t,
         {verdict.klass, verdict.summary, std::move(verdict.evidence), std::move(verdict.hosts),
          std::move(report)},
         now);
  }
}

void Monitor::SaveBaselines(double now) {
  constexpr double kSaveInterval = 60;
  constexpr double kRetryWithoutPower = 5;
  for (auto& [id, t] : jobs_) {
    if (!t.window) continue;
    if (t.ended) {
      // Ended this cycle (OnEnded, this transaction): nothing left to judge.
      if (t.record.ended_at == now) {
        Check(store_.DeleteHostBaselines(id), "delete host baselines");
        baselines_due_at_.erase(id);
      }
      continue;
    }
    if (!t.user) continue;
    if (auto due = baselines_due_at_.find(id);
        due != baselines_due_at_.end() && now < due->second) {
      continue;
    }
    const ProgressState state = t.progress->Evaluate(now);
    if (state.phase != Phase::kTraining || !state.last_step_time) continue;
    const auto [from, until] = TrainingSpan(t, state, now);
    const auto baselines = t.window->Baselines(now, from, until, config_.stale_after);
    // Saved as soon as a host has its training power baseline (a hang can
    // come seconds into training), then once a minute; until then, every few
    // seconds (a job whose GPUs report no power never gets one).
    const bool has_power = std::any_of(baselines.begin(), baselines.end(),
                                       [](const auto& b) { return b.second.power.has_value(); });
    if (!baselines.empty()) {
      Check(store_.SaveHostBaselines(id, baselines, now), "save host baselines");
    }
    t.power_baseline = has_power;
    baselines_due_at_[id] = now + (has_power ? kSaveInterval : kRetryWithoutPower);
  }
}

void Monitor::SaveProgress(Tracked& t, double now) {
  ProgressRecord p = t.progress->Snapshot(now);
  if (p.log_offset == t.saved.log_offset && p.log_inode == t.saved.log_inode &&
      p.phase == t.saved.phase && p.last_step == t.saved.last_step &&
      now - t.saved.updated_at < 60) {
    return;
  }
  Check(store_.SaveProgress(p), "save progress");
  t.saved = p;
}

}  // namespace jobmon::monitor
