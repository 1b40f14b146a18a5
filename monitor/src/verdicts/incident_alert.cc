#include "jobmon/monitor/incident_alert.h"

#include "jobmon/triage/report.h"

namespace jobmon::monitor {

alerts::Alert BuildAlert(const AlertContext& context, const JobRecord& job,
                         const IncidentRecord& incident, const std::string& status, double at,
                         const triage::TriageReport* report) {
  alerts::Alert alert;
  alert.status = status;
  alert.cluster = context.cluster;
  alert.key = alerts::AlertKey(context.cluster, job.job_id, incident.klass);
  alert.job_id = job.job_id;
  alert.job_name = job.name;
  alert.user = job.user;
  alert.incident_id = incident.id;
  alert.klass = incident.klass;
  alert.summary = incident.summary;
  alert.evidence = incident.evidence;
  alert.hosts = incident.hosts;
  alert.opened_at = incident.opened_at;
  alert.at = at;
  alert.close_reason = incident.close_reason;
  alert.diag_dir = job.diag_dir;
  alert.tunnel_command = context.tunnel_command;
  if (report) alert.report = triage::RenderMarkdown(*report);
  return alert;
}

alerts::Alert BuildDiagnosisAlert(const AlertContext& context, const JobRecord& job,
                                  const IncidentRecord& incident, double at,
                                  const std::string& verdicts, const std::string& markdown) {
  alerts::Alert alert = BuildAlert(context, job, incident,
                                   incident.state == "open" ? "firing" : "resolved", at, nullptr);
  alert.diagnosis = verdicts;
  alert.diagnosis_report = markdown;
  return alert;
}

}  // namespace jobmon::monitor
