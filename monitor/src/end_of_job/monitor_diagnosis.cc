// The Monitor's end-of-job diagnosis (monitor.h): queued at job end,
// polled before the cycle's transaction, applied inside it. The waiting
// and the thread are DiagnosisFollowUp's; here: the manifest read as the
// job's user, the store, the log and the follow-up alert.
#include <pwd.h>

#include "jobmon/monitor/diag_files.h"
#include "jobmon/monitor/incident_alert.h"
#include "jobmon/monitor/monitor.h"

namespace jobmon::monitor {

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
