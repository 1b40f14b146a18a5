#include "jobmon/monitor/diagnosis_followup.h"

#include <fmt/format.h>

#include <chrono>

namespace jobmon::monitor {
namespace {

EndDiagnosis::Clock::time_point At(double seconds) {
  return EndDiagnosis::Clock::time_point(std::chrono::duration_cast<EndDiagnosis::Clock::duration>(
      std::chrono::duration<double>(seconds)));
}

DiagnosisOutcome Outcome(DiagnosisOutcome::Kind kind, const DiagnosisFollowUp::EndedJob& job,
                         std::string summary) {
  DiagnosisOutcome o;
  o.kind = kind;
  o.job_id = job.job_id;
  o.incident_id = job.incident_id;
  o.summary = std::move(summary);
  return o;
}

}  // namespace

ArchiveCheck CheckArchiveState(const std::string& state) {
  using R = ArchiveCheck::Readiness;
  if (state == "archived") return {R::kReady, ""};
  if (state == "archive_failed") return {R::kNone, "the TSDB archive failed"};
  if (state == "ended") return {R::kNone, "no TSDB archive (archiving off or no TSDB)"};
  return {R::kWait, ""};  // starting, running, stopping, archiving, or not readable yet
}

DiagnosisFollowUp::DiagnosisFollowUp(diagnose::ReportDiagnoser diagnoser, double timeout_seconds)
    : timeout_(timeout_seconds), running_(std::move(diagnoser), timeout_seconds) {}

void DiagnosisFollowUp::Add(EndedJob job) { waiting_.push_back(std::move(job)); }

std::vector<DiagnosisOutcome> DiagnosisFollowUp::Poll(double now, const StateReader& read_state) {
  using Kind = DiagnosisOutcome::Kind;
  std::vector<DiagnosisOutcome> out;
  for (auto it = waiting_.begin(); it != waiting_.end();) {
    Expected<std::string> state = read_state(*it);
    const ArchiveCheck check = CheckArchiveState(state ? *state : std::string());
    if (check.readiness == ArchiveCheck::Readiness::kReady) {
      running_.Submit(it->job_id, it->incident_id, it->diag_dir, At(now), it->user);
    } else if (check.readiness == ArchiveCheck::Readiness::kNone) {
      out.push_back(Outcome(Kind::kSkipped, *it, "no diagnosis: " + check.why));
    } else if (now - it->ended_at > timeout_) {
      out.push_back(Outcome(
          Kind::kTimedOut, *it,
          fmt::format(
              "diagnosis timed out after {:.0f}s waiting for the TSDB archive (manifest {})",
              timeout_,
              state ? "state " + (state->empty() ? std::string("unknown") : *state)
                    : state.error().message)));
    } else {
      ++it;
      continue;
    }
    it = waiting_.erase(it);
  }
  for (EndDiagnosis::Result& r : running_.Poll(At(now))) {
    EndedJob job{r.job_id, r.incident_id, {}, {}, {}, 0};
    if (r.timed_out) {
      out.push_back(Outcome(Kind::kTimedOut, job,
                            fmt::format("diagnosis timed out after {:.0f}s", timeout_)));
    } else if (!r.error.empty()) {
      out.push_back(Outcome(Kind::kFailed, job, "diagnosis failed: " + r.error));
    } else {
      DiagnosisOutcome o = Outcome(Kind::kDiagnosed, job, r.verdicts);
      o.verdicts = std::move(r.verdicts);
      o.markdown = std::move(r.markdown);
      out.push_back(std::move(o));
    }
  }
  return out;
}

}  // namespace jobmon::monitor
