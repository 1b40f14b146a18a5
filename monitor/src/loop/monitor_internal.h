#pragma once
// What more than one of the Monitor's files (loop/) uses that is not the
// class's own: kept here once rather than copied into each.

#include <optional>

#include "jobmon/monitor/incident_policy.h"
#include "jobmon/monitor/state_store.h"

namespace jobmon::monitor {

// The open incident as the incident policy sees it (incident_policy.h).
inline std::optional<OpenIncidentFacts> FactsOf(const std::optional<IncidentRecord>& open) {
  if (!open) return std::nullopt;
  return OpenIncidentFacts{open->klass, open->opened_at};
}

}  // namespace jobmon::monitor
