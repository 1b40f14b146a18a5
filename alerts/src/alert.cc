#include "jobmon/alerts/alert.h"

namespace jobmon::alerts {

std::string AlertKey(const std::string& cluster, uint32_t job_id, const std::string& klass) {
  return cluster + "/" + std::to_string(job_id) + "/" + klass;
}

nlohmann::json ToJson(const Alert& a) {
  return {{"schema", kAlertSchema},
          {"status", a.status},
          {"key", a.key},
          {"cluster", a.cluster},
          {"job_id", a.job_id},
          {"job_name", a.job_name},
          {"user", a.user},
          {"incident_id", a.incident_id},
          {"class", a.klass},
          {"summary", a.summary},
          {"evidence", a.evidence},
          {"hosts", a.hosts},
          {"opened_at", a.opened_at},
          {"at", a.at},
          {"close_reason", a.close_reason},
          {"diag_dir", a.diag_dir},
          {"tunnel_command", a.tunnel_command},
          {"report", a.report}};
}

}  // namespace jobmon::alerts
