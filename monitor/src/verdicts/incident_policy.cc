#include "jobmon/monitor/incident_policy.h"

#include <utility>

namespace jobmon::monitor {
namespace {

IncidentDecision Decision(IncidentAction action, std::string klass, std::string reason) {
  IncidentDecision d;
  d.action = action;
  d.klass = std::move(klass);
  d.close_reason = std::move(reason);
  return d;
}
IncidentDecision Open(const std::string& klass) {
  return Decision(IncidentAction::kOpen, klass, "");
}
IncidentDecision Close(const std::string& reason) {
  return Decision(IncidentAction::kClose, "", reason);
}
IncidentDecision Supersede(const std::string& reason, const std::string& klass) {
  return Decision(IncidentAction::kSupersede, klass, reason);
}

}  // namespace

const char* ToString(IncidentAction action) {
  switch (action) {
    case IncidentAction::kNothing:
      return "nothing";
    case IncidentAction::kOpen:
      return "open";
    case IncidentAction::kClose:
      return "close";
    case IncidentAction::kSupersede:
      return "supersede";
  }
  return "?";
}

bool EndsOnProgress(const std::string& klass) {
  return klass.starts_with("hang") || klass == "slow-not-hung";
}

IncidentDecision DecideOnHeartbeat(const std::optional<OpenIncidentFacts>& open,
                                   const std::string& verdict_class) {
  if (open) return {};
  return Open(verdict_class);
}

IncidentDecision DecideOnProgress(const ProgressState& state,
                                  const std::optional<OpenIncidentFacts>& open,
                                  const std::string& stall_class, double slowdown_factor) {
  // Blind (the log not read up to date since a restart or a failed read):
  // whatever the numbers say was not watched.
  if (state.blind) return {};
  if (state.phase == Phase::kStalled) {
    if (!open) return Open(stall_class);
    // A slow job that now stopped: the stall is the news.
    if (open->klass == kSlowdownClass) return Supersede("superseded", stall_class);
    return {};
  }
  if (state.phase != Phase::kTraining) return {};
  const bool resumed = open && EndsOnProgress(open->klass) && state.last_step_time &&
                       *state.last_step_time > open->opened_at;
  if (state.slowdown) {
    // Sustained (a window of minutes), significant (the windows barely
    // overlap), and not an announced phase's pace.
    const bool slow =
        *state.slowdown >= slowdown_factor && state.slowdown_significant && !state.announced_phase;
    if ((!open || resumed) && slow) {
      // Moving again, but slowly: the resumed hang gives way to the slowdown.
      return resumed ? Supersede("resumed", kSlowdownClass) : Open(kSlowdownClass);
    }
    // Half-way back to the baseline, so a slowdown near the factor does not flap.
    if (open && open->klass == kSlowdownClass && *state.slowdown < 1 + (slowdown_factor - 1) / 2) {
      return Close("recovered");
    }
  }
  if (resumed) return Close("resumed");
  return {};
}

IncidentDecision DecideOnEnd(const std::optional<OpenIncidentFacts>& open,
                             const std::optional<EndVerdict>& verdict, bool heartbeat_handled) {
  const std::string covered = open ? open->klass : "";
  const bool news = verdict && verdict->primary != "none" &&
                    verdict->status != triage::JobStatus::kCompleted &&
                    !(verdict->primary == "heartbeat-timeout" && heartbeat_handled) &&
                    // A hang at the end is the stall incident that was open, whatever its class.
                    !(verdict->primary == "hang" && EndsOnProgress(covered)) &&
                    // Cancelling a job with an incident is the reaction to it, not news.
                    !(verdict->primary == "cancelled" && !covered.empty());
  IncidentDecision decision;
  if (news) {
    decision =
        open ? Supersede("ended", "ended/" + verdict->primary) : Open("ended/" + verdict->primary);
    decision.closed_at_once = true;
  } else if (open) {
    decision = Close("ended");
  }
  return decision;
}

}  // namespace jobmon::monitor
