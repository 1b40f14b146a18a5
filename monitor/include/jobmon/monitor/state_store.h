#pragma once
// The monitor's state in SQLite (WAL, versioned schema): tracked jobs, their
// progress and log positions, incidents with evidence. Restart-safe: one
// open incident per job is enforced by the schema, so a daemon restarted
// mid-incident finds it instead of raising it again.

#include <sqlite3.h>

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "jobmon/common/expected.h"
#include "jobmon/monitor/metric_window.h"
#include "jobmon/monitor/recovery.h"

namespace jobmon::monitor {

// 3: the alerts outbox; 4: owners' uids; 5: the end-of-job diagnosis;
// 6: the first step's time; 7: a watch per (job, asker).
inline constexpr int kStateSchemaVersion = 11;

struct JobRecord {
  uint32_t job_id = 0;
  std::string name, user, log_path, diag_dir;
  std::string source;       // "manifest", "config", "watch"
  std::string slurm_state;  // RUNNING, COMPLETED, ...
  double first_seen = 0, last_seen = 0;
  std::optional<double> ended_at;
  std::string partition, node_list;
  std::optional<double> start_time;  // Slurm's StartTime, unix seconds
  std::string final_class;           // triage's primary class at job end ("none": clean)
  std::string final_status;          // triage's status at job end (completed, failed, ...)
  // Slurm's UserId: who may see the job through the daemon's socket API.
  // Absent in rows written before schema 4 until Slurm's next answer.
  std::optional<uint32_t> uid;
  // The end-of-job TSDB diagnosis: its verdict lines, or why there is none
  // ("diagnosis timed out after 60s"). Written by SetDiagnosis only, so
  // UpsertJob never clears it.
  std::string diagnosis;
  std::optional<double> diagnosed_at;
};

// A `jobmon watch` request. `uid` set: asked by that (unprivileged) user,
// honoured only for a job of that uid; absent: asked by root or an admin.
struct WatchRequest {
  uint32_t job_id = 0;
  std::optional<uint32_t> uid;
  // `jobmon hold`: the job's recovery held (recovery.h), not a watch; uid
  // is then the asker's, whoever it is.
  bool hold = false;
  bool operator==(const WatchRequest&) const = default;
};

struct ProgressRecord {
  uint32_t job_id = 0;
  uint64_t log_inode = 0, log_device = 0;
  int64_t log_offset = 0;
  std::optional<int64_t> last_step;
  std::optional<double> last_step_time;
  std::string phase;
  std::optional<double> median_interval, p99_interval;
  std::optional<int64_t> checkpoint_period;
  std::optional<double> longest_checkpoint_pause;
  std::optional<double> baseline_interval;  // median step time early in the run
  std::optional<double> recent_interval;    // median of the last steps
  std::string profile;                      // step-line profile found
  std::optional<double> first_step_time;    // when the first step was read
  // The stall bound the daemon judged by when it saved, and which term set
  // it ("in evaluation: learned from the job's earlier ones").
  std::optional<double> threshold_seconds;
  std::string threshold_reason;
  bool stated_step_times = false;  // the lines state their step time (progress_tracker.h)
  double updated_at = 0;
};

struct IncidentRecord {
  int64_t id = 0;
  uint32_t job_id = 0;
  std::string klass;
  std::string state;  // open | closed
  double opened_at = 0;
  std::optional<double> closed_at;
  std::string summary;
  // Typed in memory; one JSON column in the store ({"evidence": [...],
  // "hosts": [...]}), written by OpenIncident and read back by the readers.
  std::vector<std::string> evidence;  // one line each
  std::vector<std::string> hosts;     // the hosts the class names
  std::string close_reason;           // resumed | ended | ...
};

class StateStore {
 public:
  // Creates a missing database 0640 whatever the umask (its -wal and -shm
  // follow the main file's mode).
  static Expected<std::unique_ptr<StateStore>> Open(const std::string& path);
  // For `jobmon status` / `list`: no schema changes, no writes; a database
  // from a newer jobmon is refused as in Open.
  static Expected<std::unique_ptr<StateStore>> OpenReadOnly(const std::string& path);
  ~StateStore();
  StateStore(const StateStore&) = delete;
  StateStore& operator=(const StateStore&) = delete;

  Expected<void> UpsertJob(const JobRecord& job);
  Expected<void> SetDiagnosis(uint32_t job_id, const std::string& diagnosis, double at);
  Expected<std::optional<JobRecord>> GetJob(uint32_t job_id);
  Expected<std::vector<JobRecord>> ListJobs();

  Expected<void> SaveProgress(const ProgressRecord& progress);
  Expected<std::optional<ProgressRecord>> GetProgress(uint32_t job_id);

  // Opens `incident` unless the job already has an open one; returns the
  // open incident's id and whether this call created it.
  Expected<std::pair<int64_t, bool>> OpenIncident(const IncidentRecord& incident);
  Expected<void> CloseIncident(int64_t id, double closed_at, const std::string& reason);
  Expected<std::vector<IncidentRecord>> Incidents(uint32_t job_id);
  Expected<std::optional<IncidentRecord>> OpenIncidentOf(uint32_t job_id);

  // `jobmon watch <id>`: requests the daemon picks up on its next Slurm poll,
  // one per job and asker (asked again: the time is renewed).
  Expected<void> AddWatch(uint32_t job_id, double requested_at,
                          std::optional<uint32_t> for_uid = std::nullopt);
  Expected<std::vector<uint32_t>> Watches();
  Expected<std::vector<WatchRequest>> WatchRequests();  // by job, admins' first
  Expected<void> RemoveWatch(uint32_t job_id);          // every request for the job
  Expected<void> RemoveWatch(uint32_t job_id, std::optional<uint32_t> uid);  // one asker's
  Expected<size_t> PendingWatches(uint32_t uid);  // a user's requests not yet taken

  // A --diag job's per-host evidence from before a stall (HostBaseline), so
  // that a daemon restarted after the job hung still judges the stall
  // against its training. Save upserts a row per host (other hosts' rows
  // stay), in the caller's transaction; a row that does not read back as a
  // baseline (a hand-edited database) is left out of the map.
  Expected<void> SaveHostBaselines(uint32_t job_id,
                                   const std::map<std::string, HostBaseline>& baselines, double at);
  Expected<std::map<std::string, HostBaseline>> HostBaselines(uint32_t job_id);
  Expected<void> DeleteHostBaselines(uint32_t job_id);

  // The chart an incident's firing alert carried (PNG bytes), for `jobmon
  // status --html`. Only the newest kKeptCharts are kept (~50 KiB each).
  static constexpr int kKeptCharts = 500;
  Expected<void> SaveIncidentChart(int64_t incident_id, const std::string& png);
  // The newest chart of the job's incidents: (incident id, PNG), if any.
  Expected<std::optional<std::pair<int64_t, std::string>>> LatestIncidentChart(uint32_t job_id);

  // Recovery (recovery.h): each step taken for an incident, in order, and
  // the holds people put on a job's recovery (`jobmon hold`).
  Expected<void> AddRecoveryStep(int64_t incident_id, uint32_t job_id, const RecoveryStep& step);
  Expected<std::vector<RecoveryStep>> RecoverySteps(int64_t incident_id);
  // The job's requeues by recovery, over all its incidents.
  Expected<int> RecoveryRequeues(uint32_t job_id);
  Expected<void> HoldRecovery(uint32_t job_id, double at, uint32_t by_uid);
  Expected<bool> RecoveryHeld(uint32_t job_id);

  // The connection, for the alerts outbox: its rows are written in the same
  // transaction as the incidents they report.
  sqlite3* handle() const { return db_; }

  // One transaction around a poll cycle's writes (one fsync, not thousands).
  // The daemon's own state (daemon_state): a value per key.
  Expected<void> SetDaemonState(const std::string& key, const std::string& value, double at);
  Expected<void> ClearDaemonState(const std::string& key);
  Expected<std::optional<std::string>> GetDaemonState(const std::string& key);

  Expected<void> Begin();
  Expected<void> Commit();

 private:
  explicit StateStore(sqlite3* db) : db_(db) {}
  Expected<void> Exec(const char* sql);
  // A prepared statement kept for the store's lifetime, reset for reuse.
  Expected<sqlite3_stmt*> Cached(const char* sql);
  sqlite3* db_;
  std::map<const char*, sqlite3_stmt*> statements_;
};

}  // namespace jobmon::monitor
