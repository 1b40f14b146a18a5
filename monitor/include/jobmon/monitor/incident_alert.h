#pragma once
// The alert an incident event sends, built from the typed records at send
// time: the job, the incident with its evidence, and (firing only) the
// triage report, rendered to Markdown here and nowhere earlier.

#include <string>

#include "jobmon/alerts/alert.h"
#include "jobmon/monitor/state_store.h"
#include "jobmon/triage/triage.h"

namespace jobmon::monitor {

struct AlertContext {
  std::string cluster;
  std::string tunnel_command;  // rebuilt from Slurm's head node and the manifest's port
};

// `status`: firing | resolved. `report`: the triage of the log when the
// incident opened (null: none, and never on a resolve).
alerts::Alert BuildAlert(const AlertContext& context, const JobRecord& job,
                         const IncidentRecord& incident, const std::string& status, double at,
                         const triage::TriageReport* report);

// The follow-up of `incident` carrying the end-of-job TSDB diagnosis (its
// verdict lines and Markdown report), with the incident's own status
// (open: firing, closed: resolved) and no triage report.
alerts::Alert BuildDiagnosisAlert(const AlertContext& context, const JobRecord& job,
                                  const IncidentRecord& incident, double at,
                                  const std::string& verdicts, const std::string& markdown);

}  // namespace jobmon::monitor
