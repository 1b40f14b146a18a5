#pragma once
// One alert event as the monitor hands it to the outbox: an incident that
// opened (firing) or closed (resolved), or a follow-up of either carrying
// the end-of-job diagnosis (`diagnosis` set) or a recovery step (`recovery`
// set); a follow-up's status is the incident's.
// The key is stable per incident (cluster, job, class), so receivers
// deduplicate and pair a resolve with its firing.

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace jobmon::alerts {

inline constexpr const char* kAlertSchema = "jobmon.alert/v1";

struct Alert {
  std::string status;  // firing | resolved
  std::string key;     // "<cluster>/<job>/<class>"
  std::string cluster;
  uint32_t job_id = 0;
  std::string job_name, user;
  int64_t incident_id = 0;
  std::string klass;    // hang/busy-wait, heartbeat/false-positive, ...
  std::string summary;  // one sentence
  std::vector<std::string> evidence;
  std::vector<std::string> hosts;  // the hosts the class names
  double opened_at = 0;
  double at = 0;             // when this event happened
  std::string close_reason;  // resolved only: resumed | ended | superseded
  std::string diag_dir, tunnel_command;
  std::string report;  // the triage report (Markdown), when there is one
  // The follow-up's TSDB diagnosis: one verdict line per playbook, and the
  // report (Markdown) Telegram gets as a document.
  std::string diagnosis, diagnosis_report;
  // A recovery follow-up (monitor/include/jobmon/monitor/recovery.h): the
  // step taken ("signal", "requeue", ...) and what was done, in words.
  std::string recovery_step, recovery;
  // The incident's chart (PNG bytes; firing only, when one was drawn): in
  // JSON as "chart": {content_type, encoding: base64, filename, data}
  // (docs/alerts.md), to Telegram as a photo.
  std::string chart_png;
};

std::string AlertKey(const std::string& cluster, uint32_t job_id, const std::string& klass);
// critical: the job is not training (hangs, deaths, failures); warning: it
// trains but something is off (slow, a heartbeat false positive).
std::string Severity(const std::string& klass);
// "Job 1234 (llama-7b): hang/busy-wait"
std::string Title(const Alert& alert);
// The Alertmanager alertname: TrainingJobHang, TrainingJobFailed, ...
std::string AlertName(const std::string& klass);

nlohmann::json ToJson(const Alert& alert);
// "jobmon-<job>-incident-<id>.png"
std::string ChartFilename(const Alert& alert);
Alert AlertFromJson(const nlohmann::json& json);

}  // namespace jobmon::alerts
