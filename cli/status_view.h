#pragma once
// `jobmon status` as data: what the command gathered (the daemon's records,
// Slurm's view, the log's projection, the manifest) becomes one view, and
// the view becomes JSON (schema jobmon.status/v1) or text. All pure; the
// command does the reading.

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "jobmon/monitor/diag_files.h"
#include "jobmon/monitor/recovery.h"
#include "jobmon/monitor/state_store.h"
#include "jobmon/slurm/jobs.h"
#include "jobmon/triage/stall_rule.h"
#include "jobmon/triage/triage.h"

namespace jobmon::cli {

// What RunStatus found. Absent parts are nullopt/empty.
struct StatusInputs {
  std::string argument;            // what was typed: a job id or a log path
  std::optional<uint32_t> job_id;  // when the argument is a job id
  double now = 0;
  std::string db;                          // the state database asked, or the API's socket
  std::string daemon_source = "database";  // how the record came: "api" or "database"
  std::optional<monitor::JobRecord> record;
  std::optional<monitor::ProgressRecord> progress;
  std::vector<monitor::IncidentRecord> incidents;
  std::optional<slurm::SlurmJob> slurm;
  std::string log_path;
  std::string diag_dir;  // empty: none found
  std::optional<triage::TriageReport> report;
  std::optional<monitor::ManifestView> manifest;
  triage::StallRule stall_rule;  // the daemon's policy, for its threshold now
  // The daemon has not had a believable answer from Slurm since then: it
  // keeps every job and incident as it was (slurm_outage.h).
  std::optional<double> slurm_unreachable_since;
  // The newest incident chart the daemon drew (`--html` only): its
  // incident and the PNG.
  std::optional<std::pair<int64_t, std::string>> chart;
  // Recovery (monitor/recovery.h): the steps taken, by incident id, and
  // whether someone held the job's recovery.
  std::map<int64_t, std::vector<monitor::RecoveryStep>> recovery;
  bool recovery_held = false;
};

struct StatusIncident {
  int64_t id = 0;
  std::string klass, state, summary, close_reason;
  double opened_at = 0;
  std::optional<double> closed_at;
  // As the daemon recorded them (evidence: one line each; hosts: those the class names).
  nlohmann::json evidence = nlohmann::json::array();
  nlohmann::json hosts = nlohmann::json::array();
  std::vector<monitor::RecoveryStep> recovery = {};  // the steps taken about it
};

// Last and expected step: from the daemon's tracker, else the log's projection.
struct StatusProgress {
  bool from_daemon = false;
  // What is followed: a known format ("megatron"), a learned progress line
  // ("learned: <template>") or the job's periodic output ("pulse: <template>").
  std::string followed_by;
  std::optional<int64_t> last_step;
  std::optional<double> last_step_time;
  std::optional<double> seconds_since_last_step;
  std::optional<int64_t> expected_step_now;
  // The daemon's own figures.
  std::optional<double> median_step_seconds, p99_step_seconds;
  std::optional<triage::StallLimit> stall_threshold;
  double updated_at = 0;
};

struct StatusView {
  std::string title;  // "Job <title>": the job id or the log path
  std::optional<uint32_t> job_id;
  std::optional<std::string> db;  // set when the daemon's record is shown: database or socket
  std::string daemon_source;      // "api" (the daemon's socket) or "database"
  std::string log;
  std::string slurm_state;  // Slurm's, else the daemon's last, else ""
  std::optional<std::string> slurm_exit_code;
  std::optional<std::string> name, user;  // the job's, from the daemon or Slurm
  std::optional<std::string> tracked_as, final_status, final_class;  // the daemon's
  // The daemon's end-of-job TSDB diagnosis: verdict lines, or why there is none.
  std::optional<std::string> diagnosis;
  std::string state;                    // ended, incident, a phase, a triage status, unknown
  std::optional<std::string> klass;     // the open incident's, else the projection's primary
  std::optional<double> stall_seconds;  // how long the open incident has been open
  StatusProgress progress;
  std::optional<triage::TriageReport> report;
  std::vector<StatusIncident> incidents;
  std::optional<std::string> diag_dir;
  std::optional<monitor::ManifestView> prometheus;
  // The owner's --diag-on-hang (from the manifest) and whether the job's
  // recovery is held; "" when the job has no manifest.
  std::string on_hang;
  bool recovery_held = false;
  std::optional<double> slurm_unreachable_since;  // the daemon's, see StatusInputs
  double now = 0;
};

StatusView BuildStatusView(const StatusInputs& in);
nlohmann::json StatusJson(const StatusView& view);
std::string StatusText(const StatusView& view);

}  // namespace jobmon::cli
