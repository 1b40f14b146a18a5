#include "jobmon/alerts/alert.h"

#include "jobmon/common/base64.h"

namespace jobmon::alerts {

std::string AlertKey(const std::string& cluster, uint32_t job_id, const std::string& klass) {
  return cluster + "/" + std::to_string(job_id) + "/" + klass;
}

std::string Severity(const std::string& klass) {
  if (klass == "heartbeat/false-positive" || klass == "tgs-degradation" ||
      klass == "slow-not-hung" || klass == "test" || klass == "monitor/slurm-unreachable") {
    return "warning";
  }
  return "critical";
}

std::string Title(const Alert& a) {
  // The monitor's own alerts (monitor/...) concern no job.
  if (a.job_id == 0) return "jobmon: " + a.klass + (a.status == "resolved" ? " resolved" : "");
  std::string title = "Job " + std::to_string(a.job_id);
  if (!a.job_name.empty()) title += " (" + a.job_name + ")";
  if (!a.diagnosis.empty()) return title + ": " + a.klass + " diagnosis";
  if (!a.recovery.empty()) return title + ": " + a.klass + " recovery (" + a.recovery_step + ")";
  return title + ": " + a.klass + (a.status == "resolved" ? " resolved" : "");
}

std::string AlertName(const std::string& klass) {
  if (klass == "heartbeat/false-positive") return "HeartbeatFalsePositive";
  if (klass == "heartbeat/true-positive") return "HeartbeatTruePositive";
  if (klass == "hang/node-death") return "TrainingJobNodeDeath";
  if (klass.starts_with("hang")) return "TrainingJobHang";
  if (klass == "slow-not-hung") return "TrainingJobStalledButComputing";
  if (klass == "tgs-degradation") return "TrainingJobSlow";
  if (klass.starts_with("ended/")) return "TrainingJobFailed";
  if (klass == "test") return "JobmonTestAlert";
  if (klass == "monitor/slurm-unreachable") return "JobmonSlurmUnreachable";
  return "TrainingJobIncident";
}

nlohmann::json ToJson(const Alert& a) {
  nlohmann::json out = {{"schema", kAlertSchema},
                        {"status", a.status},
                        {"key", a.key},
                        {"cluster", a.cluster},
                        {"job_id", a.job_id},
                        {"job_name", a.job_name},
                        {"user", a.user},
                        {"incident_id", a.incident_id},
                        {"class", a.klass},
                        {"severity", Severity(a.klass)},
                        {"title", Title(a)},
                        {"summary", a.summary},
                        {"evidence", a.evidence},
                        {"hosts", a.hosts},
                        {"opened_at", a.opened_at},
                        {"at", a.at},
                        {"close_reason", a.close_reason},
                        {"diag_dir", a.diag_dir},
                        {"tunnel_command", a.tunnel_command},
                        {"report", a.report},
                        {"diagnosis", a.diagnosis},
                        {"diagnosis_report", a.diagnosis_report},
                        {"recovery_step", a.recovery_step},
                        {"recovery", a.recovery}};
  if (!a.chart_png.empty()) {
    out["chart"] = {{"content_type", "image/png"},
                    {"encoding", "base64"},
                    {"filename", ChartFilename(a)},
                    {"data", Base64Encode(a.chart_png)}};
  }
  return out;
}

std::string ChartFilename(const Alert& alert) {
  return "jobmon-" + std::to_string(alert.job_id) + "-incident-" +
         std::to_string(alert.incident_id) + ".png";
}

Alert AlertFromJson(const nlohmann::json& j) {
  Alert a;
  a.status = j.value("status", "");
  a.key = j.value("key", "");
  a.cluster = j.value("cluster", "");
  a.job_id = j.value("job_id", 0u);
  a.job_name = j.value("job_name", "");
  a.user = j.value("user", "");
  a.incident_id = j.value("incident_id", int64_t{0});
  a.klass = j.value("class", "");
  a.summary = j.value("summary", "");
  a.evidence = j.value("evidence", std::vector<std::string>{});
  a.hosts = j.value("hosts", std::vector<std::string>{});
  a.opened_at = j.value("opened_at", 0.0);
  a.at = j.value("at", 0.0);
  a.close_reason = j.value("close_reason", "");
  a.diag_dir = j.value("diag_dir", "");
  a.tunnel_command = j.value("tunnel_command", "");
  a.report = j.value("report", "");
  a.diagnosis = j.value("diagnosis", "");
  a.diagnosis_report = j.value("diagnosis_report", "");
  a.recovery_step = j.value("recovery_step", "");
  a.recovery = j.value("recovery", "");
  if (auto chart = j.find("chart"); chart != j.end() && chart->is_object()) {
    if (auto data = chart->find("data"); data != chart->end() && data->is_string()) {
      a.chart_png = Base64Decode(data->get<std::string>()).value_or("");
    }
  }
  return a;
}

}  // namespace jobmon::alerts
