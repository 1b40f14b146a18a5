// The Monitor at a job's end (monitor.h): its log scanned and triaged, its
// incident settled, its diagnosis queued, polled before the cycle's
// transaction and applied inside it. The waiting and the thread are
// DiagnosisFollowUp's; here: the manifest read as the job's user, the
// store, the log and the follow-up alert.
#include <fmt/format.h>
#include <pwd.h>

#include "jobmon/monitor/diag_files.h"
#include "jobmon/monitor/incident_alert.h"
#include "jobmon/monitor/incident_policy.h"
#include "jobmon/monitor/monitor.h"
#include "jobmon/triage/triage_job.h"
#include "loop/monitor_internal.h"

namespace jobmon::monitor {

Expected<triage::ScanFacts> Monitor::ScanEndOfJob(const Tracked& t) const {
  if (!scanner_) return Error{"log triage unavailable"};
  if (!t.user) return Error{"the job's user is not known yet"};
  auto file = OpenUserFile(t.record.log_path, {.user = t.user});
  if (!file) return file.error();
  return scanner_->ScanHeadAndTailBounded(file->fd.get(), static_cast<uint64_t>(file->st.st_size),
                                          kEndScanHead, kEndScanTail);
}

void Monitor::ScanEndingJobs(const std::vector<slurm::SlurmJob>& listed) {
  // The jobs RefreshJobs is about to end: ended in Slurm, or gone from it.
  std::set<uint32_t> seen;
  for (const slurm::SlurmJob& job : listed) {
    seen.insert(job.job_id);
    auto found = jobs_.find(job.job_id);
    if (found == jobs_.end() || found->second.ended || !slurm::IsTerminalState(job.state)) continue;
    Tracked& t = found->second;
    if (!t.user) {
      t.user = JobUser{job.uid, job.gid};
      t.progress->SetUser(*t.user);
    }
    t.end_facts = ScanEndOfJob(t);
  }
  for (auto& [id, t] : jobs_) {
    if (!t.ended && !seen.count(id)) t.end_facts = ScanEndOfJob(t);
  }
}

std::optional<triage::TriageReport> Monitor::TriageLog(Tracked& t, const std::string& slurm_state,
                                                       double now, const ProgressState* stall) {
  if (!scanner_) return std::nullopt;
  Expected<triage::ScanFacts> facts = Error{""};
  if (t.end_facts) {
    facts = std::move(*t.end_facts);
    t.end_facts.reset();
  } else {
    facts = ScanEndOfJob(t);
  }
  if (!facts) {
    log_.Warn("triage_failed",
              {{"job", std::to_string(t.record.job_id)}, {"error", facts.error().message}});
    return std::nullopt;
  }
  triage::JobContext job;
  job.log_path = t.record.log_path;
  job.job_id = std::to_string(t.record.job_id);
  job.analysis.wall_clock_now = now;
  job.analysis.stall_min_seconds = config_.stall.min_stall_seconds;
  job.analysis.stall_factor = config_.stall.k;
  if (stall) {  // the monitor's own verdict: its triage must not say "progressing"
    job.analysis.last_step_seen_at = stall->last_step_time;
    job.analysis.stall_threshold_seconds = stall->threshold_seconds;
  }
  if (!slurm_state.empty() && !slurm_state.ends_with("?")) {
    job.slurm_state = slurm_state;
    job.slurm_exit_code = triage::ParseSlurmExitCode(t.slurm_exit_code);
  }
  triage::TriageReport report = triage::TriageJob(*facts, job);
  // A command for admins to paste is never the user's text: the log's is
  // kept only when it is the one rebuilt from Slurm's head node and port.
  if (report.tunnel_command && *report.tunnel_command != t.tunnel_command) {
    report.tunnel_command.reset();
  }
  return report;
}

void Monitor::OnEnded(Tracked& t, const std::string& slurm_state, double now) {
  PollLog(t, now);
  if (t.progress->heartbeat_seen_at() && !t.heartbeat_handled) OnHeartbeat(t, now);
  t.ended = true;
  t.record.ended_at = now;
  auto report = TriageLog(t, slurm_state, now);
  std::optional<EndVerdict> verdict;
  if (report) {
    t.record.final_class = report->primary;
    t.record.final_status = triage::ToString(report->status);
    verdict = EndVerdict{report->primary, report->status};
  }
  const IncidentDecision decision = DecideOnEnd(FactsOf(t.open), verdict, t.heartbeat_handled);
  // The incident the job ends with: the diagnosis follows it up.
  int64_t end_incident = t.open ? t.open->id : 0;
  if (decision.closes()) Close(t, decision.close_reason, now);
  Check(store_.UpsertJob(t.record), "upsert job");
  log_.Info("job_ended", {{"job", std::to_string(t.record.job_id)},
                          {"slurm_state", slurm_state},
                          {"triage_status", t.record.final_status},
                          {"triage_class", t.record.final_class}});
  // The triage classification at job end, unless an incident already named it.
  if (decision.opens()) {
    NewIncident incident{decision.klass, report->what_happened, {}, {}, std::nullopt};
    for (const auto& line : report->evidence) {
      incident.evidence.push_back(fmt::format("log line {}: {}", line.line, line.text));
    }
    incident.report = std::move(report);
    Open(t, std::move(incident), now);
    if (t.open) end_incident = t.open->id;
    if (decision.closed_at_once && t.open) {
      // Nothing to wait for: the job is over. Closed without a resolve.
      Check(store_.CloseIncident(t.open->id, now, "ended"), "close incident");
      t.open.reset();
    }
  }
  SaveProgress(t, now);
  QueueDiagnosis(t, end_incident, now);
}

void Monitor::QueueDiagnosis(const Tracked& t, int64_t incident_id, double now) {
  // The alerts went out above; the diagnosis follows when it can.
  if (!config_.diagnose_at_end || t.record.diag_dir.empty() || !t.user) return;
  followup_->Add(
      {t.record.job_id, incident_id, t.record.diag_dir, t.user, t.record.node_list, now});
}

void Monitor::ResumeDiagnoses(double now) {
  // A daemon killed between a job's end and its diagnosis left it pending:
  // the job's row has ended_at and a diag dir but no diagnosis yet.
  if (!config_.diagnose_at_end) return;
  auto jobs = store_.ListJobs();
  if (!jobs) return;
  for (const JobRecord& r : *jobs) {
    if (!r.ended_at || r.diag_dir.empty() || r.diagnosed_at || !r.diagnosis.empty()) continue;
    const std::string job = std::to_string(r.job_id);
    // Past the archive wait and the diagnosis twice over: not worth a late alert.
    if (now - *r.ended_at > kResumeDiagnosisWithin) {
      Check(store_.SetDiagnosis(r.job_id,
                                "not diagnosed: the monitor was stopped before it could be", now),
            "store diagnosis");
      log_.Warn(
          "diagnosis_abandoned",
          {{"job", job}, {"ended_s_ago", std::to_string(static_cast<int64_t>(now - *r.ended_at))}});
      continue;
    }
    // The job's user by Slurm's uid (the row keeps it), else by name.
    std::optional<JobUser> user;
    if (r.uid) {
      if (const struct passwd* pw = getpwuid(*r.uid)) user = JobUser{*r.uid, pw->pw_gid};
    } else {
      user = LookUpJobUser(r.user);
    }
    if (!user) continue;
    int64_t incident_id = 0;  // the incident the job ended with, as QueueDiagnosis had it
    if (auto incidents = store_.Incidents(r.job_id)) {
      for (const IncidentRecord& i : *incidents) {
        if (i.klass.starts_with("ended/") || i.close_reason == "ended") incident_id = i.id;
      }
    }
    followup_->Add({r.job_id, incident_id, r.diag_dir, user, r.node_list, now});
    log_.Info("diagnosis_resumed", {{"job", job}, {"incident", std::to_string(incident_id)}});
  }
}

std::vector<DiagnosisOutcome> Monitor::PollDiagnoses(double now) {
  if (followup_->pending() == 0) return {};
  return followup_->Poll(now, [](const DiagnosisFollowUp::EndedJob& job) -> Expected<std::string> {
    auto manifest = ReadDiagManifest(job.diag_dir, job.user, job.node_list);
    if (!manifest) return manifest.error();
    return manifest->state;
  });
}

void Monitor::ApplyDiagnosis(const DiagnosisOutcome& o, double now) {
  using Kind = DiagnosisOutcome::Kind;
  const std::string job = std::to_string(o.job_id);
  Check(store_.SetDiagnosis(o.job_id, o.summary, now), "store diagnosis");
  if (o.kind == Kind::kSkipped) {
    log_.Info("diagnosis_skipped", {{"job", job}, {"why", o.summary}});
    return;
  }
  if (o.kind != Kind::kDiagnosed) {  // one line; nothing is sent
    log_.Warn(o.kind == Kind::kTimedOut ? "diagnosis_timed_out" : "diagnosis_failed",
              {{"job", job}, {"why", o.summary}});
    return;
  }
  std::string verdicts = o.verdicts;
  while (!verdicts.empty() && verdicts.back() == '\n') verdicts.pop_back();
  for (char& c : verdicts) c = c == '\n' ? ';' : c;
  log_.Info("job_diagnosed",
            {{"job", job}, {"incident", std::to_string(o.incident_id)}, {"verdicts", verdicts}});
  if (o.incident_id == 0) return;  // ended cleanly: stored for `jobmon status`, nothing sent
  auto record = store_.GetJob(o.job_id);
  auto incidents = store_.Incidents(o.job_id);
  if (!record || !*record || !incidents) return;
  for (const IncidentRecord& incident : *incidents) {
    if (incident.id != o.incident_id) continue;
    // The job's Prometheus is gone: no tunnel command in the follow-up.
    Notify(BuildDiagnosisAlert({config_.cluster, ""}, **record, incident, now, o.verdicts,
                               o.markdown));
  }
}

}  // namespace jobmon::monitor
