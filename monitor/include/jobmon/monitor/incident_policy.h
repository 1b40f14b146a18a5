#pragma once
// When an incident opens, closes or gives way to another (docs/monitor.md,
// "Progress and incidents"), apart from how the monitor reads, stores and
// sends: pure functions from what the tracker and the classifiers concluded,
// the job's open incident and its Slurm end to a decision. The monitor
// applies the decision; the classes' contents (summary, evidence) are built
// there.

#include <optional>
#include <string>

#include "jobmon/monitor/progress_tracker.h"
#include "jobmon/triage/job_status.h"

namespace jobmon::monitor {

inline constexpr const char* kSlowdownClass = "tgs-degradation";

// What the policy needs of the job's open incident.
struct OpenIncidentFacts {
  std::string klass;
  double opened_at = 0;
};

enum class IncidentAction {
  kNothing,
  kOpen,       // open `klass`
  kClose,      // close the open incident with `close_reason`
  kSupersede,  // close the open incident with `close_reason`, then open `klass`
};
const char* ToString(IncidentAction action);

struct IncidentDecision {
  IncidentAction action = IncidentAction::kNothing;
  std::string klass;         // kOpen, kSupersede
  std::string close_reason;  // kClose, kSupersede: resumed | recovered | superseded | ended
  // At job end there is nothing to wait for: the incident opened is closed
  // ("ended") at once, with no resolve.
  bool closed_at_once = false;

  bool closes() const {
    return action == IncidentAction::kClose || action == IncidentAction::kSupersede;
  }
  bool opens() const {
    return action == IncidentAction::kOpen || action == IncidentAction::kSupersede;
  }
  bool operator==(const IncidentDecision&) const = default;
};

// Incidents a new step ends (the job moves again).
bool EndsOnProgress(const std::string& klass);

// A heartbeat accusation was just judged (`verdict_class`:
// heartbeat/false-positive | heartbeat/true-positive). One incident per job:
// an open one stands, whatever its class.
IncidentDecision DecideOnHeartbeat(const std::optional<OpenIncidentFacts>& open,
                                   const std::string& verdict_class);

// A live job, each cycle, from the tracker's state. `stall_class` names the
// stall (hang/startup, hang, or the stall classifier's class) and counts
// only while `state.phase` is kStalled. Nothing is decided while the
// tracker is blind. A stall supersedes an open slowdown; a step after a
// hang (or slow-not-hung) opened closes it (resumed); a sustained,
// significant slowdown of `slowdown_factor` outside an announced phase
// opens tgs-degradation, and it closes (recovered) once back under half of
// that excess.
IncidentDecision DecideOnProgress(const ProgressState& state,
                                  const std::optional<OpenIncidentFacts>& open,
                                  const std::string& stall_class, double slowdown_factor);

// What the triage at job end concluded (nullopt: no report).
struct EndVerdict {
  std::string primary;  // the triage's primary class; "none": clean
  triage::JobStatus status = triage::JobStatus::kUnknown;
};

// The job ended (or left Slurm). The open incident closes (ended); the
// triage's class becomes ended/<class> unless it is clean, completed, or
// already named: by the heartbeat incident (`heartbeat_handled`), by the
// open stall (a hang at the end), or by any open incident (a cancel is the
// reaction to it).
IncidentDecision DecideOnEnd(const std::optional<OpenIncidentFacts>& open,
                             const std::optional<EndVerdict>& verdict, bool heartbeat_handled);

}  // namespace jobmon::monitor
