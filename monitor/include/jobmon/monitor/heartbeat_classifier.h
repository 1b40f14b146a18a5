#pragma once
// heartbeat/false-positive vs heartbeat/true-positive (docs/diagnose.md
// docs/diagnose.md, the heartbeat playbook; docs/triage.md, the
// checklist): were the accused hosts alive when their heartbeats supposedly
// stopped (crash_time - heartbeat_timeout) and when they were accused? The
// system evidence decides where there is some; the log checklist decides
// otherwise and is always quoted.

#include <optional>
#include <string>
#include <vector>

#include "jobmon/monitor/stall_classifier.h"
#include "jobmon/triage/triage.h"

namespace jobmon::monitor {

struct HeartbeatInput {
  std::optional<triage::HeartbeatChecklist> checklist;  // from the log
  std::vector<std::string> accused_hosts;               // empty: every host of the window counts
  double accused_at = 0;                                // when the accusation was read
  double timeout = 100;                                 // jax_distributed_heartbeat_timeout_seconds
  std::optional<StallEvidence> at_silence;              // window at accused_at - timeout
  std::optional<StallEvidence> at_accusation;
};

struct HeartbeatVerdict {
  std::string klass;  // heartbeat/false-positive | heartbeat/true-positive
  std::string summary;
  std::vector<std::string> evidence;
  std::vector<std::string> hosts;  // accused hosts
  bool decided_by_system_evidence = false;
};

HeartbeatVerdict ClassifyHeartbeat(const HeartbeatInput& input);

}  // namespace jobmon::monitor
