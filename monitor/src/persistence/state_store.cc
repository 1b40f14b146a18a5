#include "jobmon/monitor/state_store.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <nlohmann/json.hpp>
#include <utility>
#include <vector>

#include "jobmon/alerts/outbox.h"

namespace jobmon::monitor {
namespace {

const char* const kSchema = R"sql(
CREATE TABLE IF NOT EXISTS jobs (
  job_id INTEGER PRIMARY KEY,
  name TEXT NOT NULL DEFAULT '', user TEXT NOT NULL DEFAULT '',
  log_path TEXT NOT NULL DEFAULT '', diag_dir TEXT NOT NULL DEFAULT '',
  source TEXT NOT NULL DEFAULT '', slurm_state TEXT NOT NULL DEFAULT '',
  first_seen REAL NOT NULL, last_seen REAL NOT NULL, ended_at REAL,
  partition TEXT NOT NULL DEFAULT '', node_list TEXT NOT NULL DEFAULT '', start_time REAL,
  final_class TEXT NOT NULL DEFAULT '', final_status TEXT NOT NULL DEFAULT '', uid INTEGER,
  diagnosis TEXT NOT NULL DEFAULT '', diagnosed_at REAL);
CREATE TABLE IF NOT EXISTS progress (
  job_id INTEGER PRIMARY KEY REFERENCES jobs(job_id),
  log_inode INTEGER NOT NULL, log_device INTEGER NOT NULL, log_offset INTEGER NOT NULL,
  last_step INTEGER, last_step_time REAL, phase TEXT NOT NULL,
  median_interval REAL, p99_interval REAL, checkpoint_period INTEGER,
  longest_checkpoint_pause REAL, updated_at REAL NOT NULL,
  baseline_interval REAL, recent_interval REAL, profile TEXT NOT NULL DEFAULT '',
  first_step_time REAL, threshold_seconds REAL, threshold_reason TEXT NOT NULL DEFAULT '',
  stated_step_times INTEGER NOT NULL DEFAULT 0);
CREATE TABLE IF NOT EXISTS incidents (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  job_id INTEGER NOT NULL REFERENCES jobs(job_id),
  class TEXT NOT NULL, state TEXT NOT NULL CHECK (state IN ('open', 'closed')),
  opened_at REAL NOT NULL, closed_at REAL,
  summary TEXT NOT NULL, evidence_json TEXT NOT NULL, close_reason TEXT NOT NULL DEFAULT '');
-- At most one open incident per job: a restarted daemon finds it, never duplicates it.
CREATE UNIQUE INDEX IF NOT EXISTS one_open_incident ON incidents(job_id) WHERE state = 'open';
-- One request per job and asker (uid NULL: root or an admin), so a user's
-- request never replaces an admin's.
CREATE TABLE IF NOT EXISTS watches (job_id INTEGER NOT NULL, requested_at REAL NOT NULL,
  uid INTEGER);
CREATE UNIQUE INDEX IF NOT EXISTS one_watch_per_asker ON watches(job_id, ifnull(uid, -1));
-- Version 8: the daemon's own state a restart must not forget (Slurm
-- unreachable since when, the outage alert sent), one row per key.
CREATE TABLE IF NOT EXISTS daemon_state (key TEXT PRIMARY KEY, value TEXT NOT NULL,
  updated_at REAL NOT NULL);
-- A --diag job's per-host evidence from before a stall (MetricWindow's
-- HostBaseline as JSON), saved while it trains, deleted when it ends.
CREATE TABLE IF NOT EXISTS host_baselines (
  job_id INTEGER NOT NULL REFERENCES jobs(job_id), host TEXT NOT NULL, json TEXT NOT NULL,
  updated_at REAL NOT NULL, PRIMARY KEY (job_id, host));
-- Version 9: the chart (PNG) an incident's firing alert carried, the newest
-- StateStore::kKeptCharts kept.
CREATE TABLE IF NOT EXISTS incident_charts (
  incident_id INTEGER PRIMARY KEY REFERENCES incidents(id), png BLOB NOT NULL);
-- Version 11: recovery (recovery.h): the steps taken per incident, recorded
-- after each ran, so a restarted daemon neither repeats nor skips one; and
-- the holds people put on a job's recovery.
CREATE TABLE IF NOT EXISTS recovery_steps (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  incident_id INTEGER NOT NULL REFERENCES incidents(id), job_id INTEGER NOT NULL,
  step TEXT NOT NULL, at REAL NOT NULL, detail TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS recovery_steps_by_incident ON recovery_steps(incident_id);
CREATE TABLE IF NOT EXISTS recovery_holds (job_id INTEGER PRIMARY KEY, at REAL NOT NULL,
  by_uid INTEGER NOT NULL);
)sql";

// Version 1 (the first schema) lacked these columns and the watches table.
const char* const kMigrateFrom1 = R"sql(
ALTER TABLE jobs ADD COLUMN partition TEXT NOT NULL DEFAULT '';
ALTER TABLE jobs ADD COLUMN node_list TEXT NOT NULL DEFAULT '';
ALTER TABLE jobs ADD COLUMN start_time REAL;
ALTER TABLE jobs ADD COLUMN final_class TEXT NOT NULL DEFAULT '';
ALTER TABLE jobs ADD COLUMN final_status TEXT NOT NULL DEFAULT '';
ALTER TABLE progress ADD COLUMN baseline_interval REAL;
ALTER TABLE progress ADD COLUMN recent_interval REAL;
ALTER TABLE progress ADD COLUMN profile TEXT NOT NULL DEFAULT '';
)sql";

// Version 4 records the owner's uid (the socket API shows users their own
// jobs) and who asked for a watch. NULL: not known yet / asked by an admin.
const char* const kMigrateJobsTo4 = "ALTER TABLE jobs ADD COLUMN uid INTEGER;";
const char* const kMigrateWatchesTo4 = "ALTER TABLE watches ADD COLUMN uid INTEGER;";
// Version 5 keeps the end-of-job diagnosis for `jobmon status`.
const char* const kMigrateTo5 = R"sql(
ALTER TABLE jobs ADD COLUMN diagnosis TEXT NOT NULL DEFAULT '';
ALTER TABLE jobs ADD COLUMN diagnosed_at REAL;
)sql";

// Version 6 keeps when the first step was read: after a restart the
// training baseline (power, utilization) starts there, not a window back.
const char* const kMigrateTo6 = "ALTER TABLE progress ADD COLUMN first_step_time REAL;";

// Version 7 keys watches by (job, asker) instead of job alone; SQLite cannot
// change a key in place, so the rows move to a new table (kSchema then adds
// its index). One transaction: a crash leaves version 6 whole.
const char* const kMigrateTo7 = R"sql(
BEGIN;
CREATE TABLE watches_7 (job_id INTEGER NOT NULL, requested_at REAL NOT NULL, uid INTEGER);
INSERT INTO watches_7 (job_id, requested_at, uid) SELECT job_id, requested_at, uid FROM watches;
DROP TABLE watches;
ALTER TABLE watches_7 RENAME TO watches;
COMMIT;
)sql";

// Version 10 keeps the daemon's own stall bound and why (a phase's learned
// length, a logging period): `jobmon status` shows the bound it judges by;
// and whether the lines state their step time, so a restarted daemon keeps
// the bound it had instead of k x the gaps.
const char* const kMigrateTo10 = R"sql(
ALTER TABLE progress ADD COLUMN threshold_seconds REAL;
ALTER TABLE progress ADD COLUMN threshold_reason TEXT NOT NULL DEFAULT '';
ALTER TABLE progress ADD COLUMN stated_step_times INTEGER NOT NULL DEFAULT 0;
)sql";

// Owns one prepared statement; move-only, so it is finalized exactly once.
struct Statement {
  sqlite3_stmt* stmt = nullptr;
  Statement() = default;
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;
  Statement(Statement&& other) noexcept : stmt(other.stmt) { other.stmt = nullptr; }
  Statement& operator=(Statement&& other) noexcept {
    std::swap(stmt, other.stmt);
    return *this;
  }
  ~Statement() { sqlite3_finalize(stmt); }
};

Error SqlError(sqlite3* db, const std::string& what) {
  return Error{what + ": " + sqlite3_errmsg(db)};
}

void BindOptional(sqlite3_stmt* s, int i, const std::optional<double>& v) {
  v ? sqlite3_bind_double(s, i, *v) : sqlite3_bind_null(s, i);
}
void BindOptional(sqlite3_stmt* s, int i, const std::optional<int64_t>& v) {
  v ? sqlite3_bind_int64(s, i, *v) : sqlite3_bind_null(s, i);
}
void BindText(sqlite3_stmt* s, int i, const std::string& v) {
  sqlite3_bind_text(s, i, v.c_str(), static_cast<int>(v.size()), SQLITE_TRANSIENT);
}
std::string Text(sqlite3_stmt* s, int i) {
  const unsigned char* t = sqlite3_column_text(s, i);
  return t ? reinterpret_cast<const char*>(t) : "";
}
std::optional<double> OptDouble(sqlite3_stmt* s, int i) {
  if (sqlite3_column_type(s, i) == SQLITE_NULL) return std::nullopt;
  return sqlite3_column_double(s, i);
}
std::optional<int64_t> OptInt(sqlite3_stmt* s, int i) {
  if (sqlite3_column_type(s, i) == SQLITE_NULL) return std::nullopt;
  return sqlite3_column_int64(s, i);
}

Expected<int> SchemaVersion(sqlite3* db, const std::string& path) {
  Statement version;
  if (sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &version.stmt, nullptr) != SQLITE_OK ||
      sqlite3_step(version.stmt) != SQLITE_ROW) {
    return SqlError(db, path + ": schema version");
  }
  return sqlite3_column_int(version.stmt, 0);
}

bool HasColumn(sqlite3* db, const std::string& table, const std::string& column) {
  sqlite3_stmt* info = nullptr;
  bool found = false;
  if (sqlite3_prepare_v2(db, ("PRAGMA table_info(" + table + ")").c_str(), -1, &info, nullptr) ==
      SQLITE_OK) {
    while (!found && sqlite3_step(info) == SQLITE_ROW) {
      const auto* name = reinterpret_cast<const char*>(sqlite3_column_text(info, 1));
      found = name && column == name;
    }
  }
  sqlite3_finalize(info);
  return found;
}

Expected<Statement> Prepare(sqlite3* db, const char* sql) {
  Statement s;
  if (sqlite3_prepare_v2(db, sql, -1, &s.stmt, nullptr) != SQLITE_OK) {
    return SqlError(db, "prepare");
  }
  return s;
}

JobRecord ReadJob(sqlite3_stmt* s) {
  JobRecord j;
  j.job_id = static_cast<uint32_t>(sqlite3_column_int64(s, 0));
  j.name = Text(s, 1);
  j.user = Text(s, 2);
  j.log_path = Text(s, 3);
  j.diag_dir = Text(s, 4);
  j.source = Text(s, 5);
  j.slurm_state = Text(s, 6);
  j.first_seen = sqlite3_column_double(s, 7);
  j.last_seen = sqlite3_column_double(s, 8);
  j.ended_at = OptDouble(s, 9);
  j.partition = Text(s, 10);
  j.node_list = Text(s, 11);
  j.start_time = OptDouble(s, 12);
  j.final_class = Text(s, 13);
  j.final_status = Text(s, 14);
  if (auto uid = OptInt(s, 15)) j.uid = static_cast<uint32_t>(*uid);
  j.diagnosis = Text(s, 16);
  j.diagnosed_at = OptDouble(s, 17);
  return j;
}

// The incident's evidence column. A value that is not the object written
// here (a hand-edited database) reads as no evidence.
std::string EvidenceJson(const IncidentRecord& r) {
  return nlohmann::json{{"evidence", r.evidence}, {"hosts", r.hosts}}.dump(
      -1, ' ', false, nlohmann::json::error_handler_t::replace);
}

void ReadEvidence(const std::string& text, IncidentRecord& r) {
  auto doc = nlohmann::json::parse(text, nullptr, false);
  if (!doc.is_object()) return;
  auto strings = [&doc](const char* key) {
    std::vector<std::string> out;
    auto found = doc.find(key);
    if (found == doc.end() || !found->is_array()) return out;
    for (const auto& item : *found) {
      if (item.is_string()) out.push_back(item.get<std::string>());
    }
    return out;
  };
  r.evidence = strings("evidence");
  r.hosts = strings("hosts");
}

// A HostBaseline's column: absent values left out (a non-finite one is
// written as null and reads back as absent).
std::string BaselineJson(const HostBaseline& b) {
  nlohmann::json doc = nlohmann::json::object();
  auto put = [](nlohmann::json& to, const char* key, const std::optional<double>& v) {
    if (v) to[key] = *v;
  };
  put(doc, "power", b.power);
  put(doc, "tcp_retransmit_rate", b.tcp_retransmit_rate);
  put(doc, "tcp_retransmit_baseline", b.tcp_retransmit_baseline);
  put(doc, "sm_clock_max", b.sm_clock_max);
  nlohmann::json floors = nlohmann::json::object();
  for (const auto& [gpu, f] : b.idle_floors) {
    nlohmann::json one = nlohmann::json::object();
    put(one, "with_context", f.with_context);
    put(one, "device", f.device);
    floors[gpu] = std::move(one);
  }
  doc["idle_floors"] = std::move(floors);
  doc["training_from"] = b.training_from;
  doc["training_until"] = b.training_until;
  return doc.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::optional<HostBaseline> ReadBaseline(const std::string& text) {
  auto doc = nlohmann::json::parse(text, nullptr, false);
  if (!doc.is_object()) return std::nullopt;
  auto number = [](const nlohmann::json& from, const char* key) -> std::optional<double> {
    auto found = from.find(key);
    if (found == from.end() || !found->is_number()) return std::nullopt;
    return found->get<double>();
  };
  HostBaseline b;
  b.power = number(doc, "power");
  b.tcp_retransmit_rate = number(doc, "tcp_retransmit_rate");
  b.tcp_retransmit_baseline = number(doc, "tcp_retransmit_baseline");
  b.sm_clock_max = number(doc, "sm_clock_max");
  if (auto floors = doc.find("idle_floors"); floors != doc.end() && floors->is_object()) {
    for (const auto& [gpu, one] : floors->items()) {
      if (!one.is_object()) continue;
      IdleFloors f{number(one, "with_context"), number(one, "device")};
      if (f.with_context || f.device) b.idle_floors.emplace(gpu, f);
    }
  }
  auto from = number(doc, "training_from"), until = number(doc, "training_until");
  if (!from || !until) return std::nullopt;
  b.training_from = *from;
  b.training_until = *until;
  return b;
}

IncidentRecord ReadIncident(sqlite3_stmt* s) {
  IncidentRecord r;
  r.id = sqlite3_column_int64(s, 0);
  r.job_id = static_cast<uint32_t>(sqlite3_column_int64(s, 1));
  r.klass = Text(s, 2);
  r.state = Text(s, 3);
  r.opened_at = sqlite3_column_double(s, 4);
  r.closed_at = OptDouble(s, 5);
  r.summary = Text(s, 6);
  ReadEvidence(Text(s, 7), r);
  r.close_reason = Text(s, 8);
  return r;
}

constexpr const char* kJobColumns =
    "job_id, name, user, log_path, diag_dir, source, slurm_state, first_seen, last_seen, ended_at, "
    "partition, node_list, start_time, final_class, final_status, uid, diagnosis, diagnosed_at";
constexpr const char* kIncidentColumns =
    "id, job_id, class, state, opened_at, closed_at, summary, evidence_json, close_reason";

// Job names, users, log paths and alert payloads: for the daemon's user and
// its group (the state dir is 0750 so the group can run `jobmon status`),
// nobody else. SQLite gives -wal and -shm the mode of the main file.
constexpr mode_t kStateDbMode = 0640;

// Creates a new database file with kStateDbMode whatever the umask (SQLite
// itself would create it 0644 & ~umask). An existing file is left as it is.
Expected<void> CreateIfMissing(const std::string& path) {
  if (path.empty() || path == ":memory:") return {};
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, kStateDbMode);
  if (fd < 0) {
    if (errno == EEXIST) return {};
    return Error{path + ": cannot create: " + std::strerror(errno)};
  }
  // The umask may have taken the group bit: set the mode exactly.
  const bool mode_set = fchmod(fd, kStateDbMode) == 0;
  const int saved = errno;
  close(fd);
  if (!mode_set) return Error{path + ": chmod: " + std::strerror(saved)};
  return {};
}

}  // namespace

Expected<std::unique_ptr<StateStore>> StateStore::Open(const std::string& path) {
  if (auto created = CreateIfMissing(path); !created) return created.error();
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr) !=
      SQLITE_OK) {
    Error error = SqlError(db, path);
    sqlite3_close(db);
    return error;
  }
  std::unique_ptr<StateStore> store(new StateStore(db));
  sqlite3_busy_timeout(db, 5000);
  if (auto r = store->Exec("PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; "
                           "PRAGMA foreign_keys=ON;");
      !r) {
    return r.error();
  }
  auto version = SchemaVersion(db, path);
  if (!version) return version.error();
  const int found = *version;
  if (found > kStateSchemaVersion) {
    return Error{path + ": schema version " + std::to_string(found) +
                 " was written by a newer jobmon (this one knows " +
                 std::to_string(kStateSchemaVersion) + ")"};
  }
  if (found == 1) {
    if (auto r = store->Exec(kMigrateFrom1); !r)
      return Error{path + ": migration from schema 1: " + r.error().message};
  }
  if (found >= 1 && found < 4) {
    if (auto r = store->Exec(kMigrateJobsTo4); !r)
      return Error{path + ": migration to schema 4: " + r.error().message};
    // Version 1 had no watches table: kSchema below creates it whole.
    if (found >= 2) {
      if (auto r = store->Exec(kMigrateWatchesTo4); !r)
        return Error{path + ": migration to schema 4: " + r.error().message};
    }
  }
  if (found >= 1 && found < 5) {
    if (auto r = store->Exec(kMigrateTo5); !r)
      return Error{path + ": migration to schema 5: " + r.error().message};
  }
  // Version 1 had no watches table (kSchema creates it); from 2 on it has
  // the uid column by now.
  if (found >= 2 && found < 7) {
    if (auto r = store->Exec(kMigrateTo7); !r)
      return Error{path + ": migration to schema 7: " + r.error().message};
  }
  if (auto r = store->Exec(kSchema); !r) return r.error();
  // After kSchema: a database of an early version may have had no progress
  // table, which kSchema has just created whole.
  if (found >= 1 && found < 6 && !HasColumn(db, "progress", "first_step_time")) {
    if (auto r = store->Exec(kMigrateTo6); !r)
      return Error{path + ": migration to schema 6: " + r.error().message};
  }
  if (found >= 1 && found < 10 && !HasColumn(db, "progress", "threshold_seconds")) {
    if (auto r = store->Exec(kMigrateTo10); !r)
      return Error{path + ": migration to schema 10: " + r.error().message};
  }
  if (auto r = alerts::Outbox::EnsureSchema(db); !r) return r.error();
  if (auto r = store->Exec(("PRAGMA user_version=" + std::to_string(kStateSchemaVersion)).c_str());
      !r) {
    return r.error();
  }
  return store;
}

Expected<std::unique_ptr<StateStore>> StateStore::OpenReadOnly(const std::string& path) {
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK) {
    Error error = SqlError(db, path);
    sqlite3_close(db);
    return error;
  }
  std::unique_ptr<StateStore> store(new StateStore(db));
  sqlite3_busy_timeout(db, 5000);
  auto version = SchemaVersion(db, path);
  if (!version) return version.error();
  const int found = *version;
  if (found != kStateSchemaVersion) {
    return Error{path + ": schema version " + std::to_string(found) + ", this jobmon reads " +
                 std::to_string(kStateSchemaVersion) + " (start the daemon once to migrate)"};
  }
  return store;
}

StateStore::~StateStore() {
  for (auto& [sql, stmt] : statements_) sqlite3_finalize(stmt);
  sqlite3_close(db_);
}

Expected<sqlite3_stmt*> StateStore::Cached(const char* sql) {
  auto found = statements_.find(sql);
  if (found != statements_.end()) {
    sqlite3_reset(found->second);
    sqlite3_clear_bindings(found->second);
    return found->second;
  }
  sqlite3_stmt* stmt = nullptr;
  if (sqlite3_prepare_v2(db_, sql, -1, &stmt, nullptr) != SQLITE_OK) {
    return SqlError(db_, "prepare");
  }
  statements_[sql] = stmt;
  return stmt;
}

Expected<void> StateStore::Begin() { return Exec("BEGIN IMMEDIATE"); }
Expected<void> StateStore::Commit() { return Exec("COMMIT"); }

Expected<void> StateStore::Exec(const char* sql) {
  char* message = nullptr;
  if (sqlite3_exec(db_, sql, nullptr, nullptr, &message) != SQLITE_OK) {
    std::string text = message ? message : "unknown error";
    sqlite3_free(message);
    return Error{std::string("sqlite: ") + text};
  }
  return {};
}

Expected<void> StateStore::UpsertJob(const JobRecord& j) {
  auto s = Cached(
      "INSERT INTO jobs (job_id, name, user, log_path, diag_dir, source, slurm_state, "
      "first_seen, last_seen, ended_at, partition, node_list, start_time, final_class, "
      "final_status, uid) VALUES (?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13,?14,?15,?16) "
      "ON CONFLICT(job_id) DO UPDATE SET name=?2, user=?3, log_path=?4, diag_dir=?5, "
      "source=?6, slurm_state=?7, last_seen=?9, ended_at=?10, partition=?11, node_list=?12, "
      "start_time=?13, final_class=?14, final_status=?15, uid=coalesce(?16, uid)");
  if (!s) return s.error();
  sqlite3_stmt* st = *s;
  sqlite3_bind_int64(st, 1, j.job_id);
  BindText(st, 2, j.name);
  BindText(st, 3, j.user);
  BindText(st, 4, j.log_path);
  BindText(st, 5, j.diag_dir);
  BindText(st, 6, j.source);
  BindText(st, 7, j.slurm_state);
  sqlite3_bind_double(st, 8, j.first_seen);
  sqlite3_bind_double(st, 9, j.last_seen);
  BindOptional(st, 10, j.ended_at);
  BindText(st, 11, j.partition);
  BindText(st, 12, j.node_list);
  BindOptional(st, 13, j.start_time);
  BindText(st, 14, j.final_class);
  BindText(st, 15, j.final_status);
  BindOptional(st, 16, j.uid ? std::optional<int64_t>(*j.uid) : std::nullopt);
  if (sqlite3_step(st) != SQLITE_DONE) return SqlError(db_, "upsert job");
  return {};
}

Expected<void> StateStore::SetDiagnosis(uint32_t job_id, const std::string& diagnosis, double at) {
  auto s = Cached("UPDATE jobs SET diagnosis=?2, diagnosed_at=?3 WHERE job_id=?1");
  if (!s) return s.error();
  sqlite3_bind_int64(*s, 1, job_id);
  BindText(*s, 2, diagnosis);
  sqlite3_bind_double(*s, 3, at);
  if (sqlite3_step(*s) != SQLITE_DONE) return SqlError(db_, "set diagnosis");
  return {};
}

Expected<std::optional<JobRecord>> StateStore::GetJob(uint32_t job_id) {
  std::string sql = std::string("SELECT ") + kJobColumns + " FROM jobs WHERE job_id=?1";
  auto s = Prepare(db_, sql.c_str());
  if (!s) return s.error();
  sqlite3_bind_int64(s->stmt, 1, job_id);
  int rc = sqlite3_step(s->stmt);
  if (rc == SQLITE_DONE) return std::optional<JobRecord>{};
  if (rc != SQLITE_ROW) return SqlError(db_, "get job");
  return std::optional<JobRecord>{ReadJob(s->stmt)};
}

Expected<std::vector<JobRecord>> StateStore::ListJobs() {
  std::string sql = std::string("SELECT ") + kJobColumns + " FROM jobs ORDER BY job_id";
  auto s = Prepare(db_, sql.c_str());
  if (!s) return s.error();
  std::vector<JobRecord> out;
  int rc;
  while ((rc = sqlite3_step(s->stmt)) == SQLITE_ROW) out.push_back(ReadJob(s->stmt));
  if (rc != SQLITE_DONE) return SqlError(db_, "list jobs");
  return out;
}

Expected<void> StateStore::SaveProgress(const ProgressRecord& p) {
  // An upsert, as UpsertJob's: the row exists from the job's second poll on,
  // and a REPLACE deleted and re-inserted it (and checked its job again),
  // a tenth of a store-mode cycle at 10,000 jobs (tests/bench/monitor_bench.py).
  auto s = Cached(
      "INSERT INTO progress (job_id, log_inode, log_device, log_offset, "
      "last_step, last_step_time, phase, median_interval, p99_interval, "
      "checkpoint_period, longest_checkpoint_pause, updated_at, baseline_interval, "
      "recent_interval, profile, first_step_time, threshold_seconds, threshold_reason, "
      "stated_step_times) "
      "VALUES (?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13,?14,?15,?16,?17,?18,?19) "
      "ON CONFLICT(job_id) DO UPDATE SET log_inode=?2, log_device=?3, log_offset=?4, "
      "last_step=?5, last_step_time=?6, phase=?7, median_interval=?8, p99_interval=?9, "
      "checkpoint_period=?10, longest_checkpoint_pause=?11, updated_at=?12, "
      "baseline_interval=?13, recent_interval=?14, profile=?15, first_step_time=?16, "
      "threshold_seconds=?17, threshold_reason=?18, stated_step_times=?19");
  if (!s) return s.error();
  sqlite3_stmt* st = *s;
  sqlite3_bind_int64(st, 1, p.job_id);
  sqlite3_bind_int64(st, 2, static_cast<int64_t>(p.log_inode));
  sqlite3_bind_int64(st, 3, static_cast<int64_t>(p.log_device));
  sqlite3_bind_int64(st, 4, p.log_offset);
  BindOptional(st, 5, p.last_step);
  BindOptional(st, 6, p.last_step_time);
  BindText(st, 7, p.phase);
  BindOptional(st, 8, p.median_interval);
  BindOptional(st, 9, p.p99_interval);
  BindOptional(st, 10, p.checkpoint_period);
  BindOptional(st, 11, p.longest_checkpoint_pause);
  sqlite3_bind_double(st, 12, p.updated_at);
  BindOptional(st, 13, p.baseline_interval);
  BindOptional(st, 14, p.recent_interval);
  BindText(st, 15, p.profile);
  BindOptional(st, 16, p.first_step_time);
  BindOptional(st, 17, p.threshold_seconds);
  BindText(st, 18, p.threshold_reason);
  sqlite3_bind_int(st, 19, p.stated_step_times ? 1 : 0);
  if (sqlite3_step(st) != SQLITE_DONE) return SqlError(db_, "save progress");
  return {};
}

Expected<std::optional<ProgressRecord>> StateStore::GetProgress(uint32_t job_id) {
  auto s = Prepare(db_,
                   "SELECT job_id, log_inode, log_device, log_offset, last_step, last_step_time, "
                   "phase, median_interval, p99_interval, checkpoint_period, "
                   "longest_checkpoint_pause, updated_at, baseline_interval, recent_interval, "
                   "profile, first_step_time, threshold_seconds, threshold_reason, "
                   "stated_step_times "
                   "FROM progress WHERE job_id=?1");
  if (!s) return s.error();
  sqlite3_bind_int64(s->stmt, 1, job_id);
  int rc = sqlite3_step(s->stmt);
  if (rc == SQLITE_DONE) return std::optional<ProgressRecord>{};
  if (rc != SQLITE_ROW) return SqlError(db_, "get progress");
  sqlite3_stmt* st = s->stmt;
  ProgressRecord p;
  p.job_id = static_cast<uint32_t>(sqlite3_column_int64(st, 0));
  p.log_inode = static_cast<uint64_t>(sqlite3_column_int64(st, 1));
  p.log_device = static_cast<uint64_t>(sqlite3_column_int64(st, 2));
  p.log_offset = sqlite3_column_int64(st, 3);
  p.last_step = OptInt(st, 4);
  p.last_step_time = OptDouble(st, 5);
  p.phase = Text(st, 6);
  p.median_interval = OptDouble(st, 7);
  p.p99_interval = OptDouble(st, 8);
  p.checkpoint_period = OptInt(st, 9);
  p.longest_checkpoint_pause = OptDouble(st, 10);
  p.updated_at = sqlite3_column_double(st, 11);
  p.baseline_interval = OptDouble(st, 12);
  p.recent_interval = OptDouble(st, 13);
  p.profile = Text(st, 14);
  p.first_step_time = OptDouble(st, 15);
  p.threshold_seconds = OptDouble(st, 16);
  p.threshold_reason = Text(st, 17);
  p.stated_step_times = sqlite3_column_int(st, 18) != 0;
  return std::optional<ProgressRecord>{p};
}

Expected<std::pair<int64_t, bool>> StateStore::OpenIncident(const IncidentRecord& r) {
  auto s =
      Prepare(db_,
              "INSERT INTO incidents (job_id, class, state, opened_at, summary, evidence_json) "
              "VALUES (?1, ?2, 'open', ?3, ?4, ?5) ON CONFLICT DO NOTHING");
  if (!s) return s.error();
  sqlite3_stmt* st = s->stmt;
  sqlite3_bind_int64(st, 1, r.job_id);
  BindText(st, 2, r.klass);
  sqlite3_bind_double(st, 3, r.opened_at);
  BindText(st, 4, r.summary);
  BindText(st, 5, EvidenceJson(r));
  if (sqlite3_step(st) != SQLITE_DONE) return SqlError(db_, "open incident");
  bool created = sqlite3_changes(db_) == 1;
  auto open = OpenIncidentOf(r.job_id);
  if (!open) return open.error();
  if (!*open) return Error{"open incident vanished"};
  return std::pair{(*open)->id, created};
}

Expected<void> StateStore::CloseIncident(int64_t id, double closed_at, const std::string& reason) {
  auto s = Prepare(db_,
                   "UPDATE incidents SET state='closed', closed_at=?2, close_reason=?3 "
                   "WHERE id=?1 AND state='open'");
  if (!s) return s.error();
  sqlite3_bind_int64(s->stmt, 1, id);
  sqlite3_bind_double(s->stmt, 2, closed_at);
  BindText(s->stmt, 3, reason);
  if (sqlite3_step(s->stmt) != SQLITE_DONE) return SqlError(db_, "close incident");
  return {};
}

Expected<std::vector<IncidentRecord>> StateStore::Incidents(uint32_t job_id) {
  std::string sql =
      std::string("SELECT ") + kIncidentColumns + " FROM incidents WHERE job_id=?1 ORDER BY id";
  auto s = Prepare(db_, sql.c_str());
  if (!s) return s.error();
  sqlite3_bind_int64(s->stmt, 1, job_id);
  std::vector<IncidentRecord> out;
  int rc;
  while ((rc = sqlite3_step(s->stmt)) == SQLITE_ROW) out.push_back(ReadIncident(s->stmt));
  if (rc != SQLITE_DONE) return SqlError(db_, "incidents");
  return out;
}

Expected<std::optional<IncidentRecord>> StateStore::OpenIncidentOf(uint32_t job_id) {
  std::string sql = std::string("SELECT ") + kIncidentColumns +
                    " FROM incidents WHERE job_id=?1 AND state='open'";
  auto s = Prepare(db_, sql.c_str());
  if (!s) return s.error();
  sqlite3_bind_int64(s->stmt, 1, job_id);
  int rc = sqlite3_step(s->stmt);
  if (rc == SQLITE_DONE) return std::optional<IncidentRecord>{};
  if (rc != SQLITE_ROW) return SqlError(db_, "open incident");
  return std::optional<IncidentRecord>{ReadIncident(s->stmt)};
}

Expected<void> StateStore::AddWatch(uint32_t job_id, double requested_at,
                                    std::optional<uint32_t> for_uid) {
  auto s = Prepare(
      db_, "INSERT OR REPLACE INTO watches (job_id, requested_at, uid) VALUES (?1, ?2, ?3)");
  if (!s) return s.error();
  sqlite3_bind_int64(s->stmt, 1, job_id);
  sqlite3_bind_double(s->stmt, 2, requested_at);
  BindOptional(s->stmt, 3, for_uid ? std::optional<int64_t>(*for_uid) : std::nullopt);
  if (sqlite3_step(s->stmt) != SQLITE_DONE) return SqlError(db_, "add watch");
  return {};
}

Expected<std::vector<uint32_t>> StateStore::Watches() {
  auto s = Prepare(db_, "SELECT DISTINCT job_id FROM watches ORDER BY job_id");
  if (!s) return s.error();
  std::vector<uint32_t> out;
  int rc;
  while ((rc = sqlite3_step(s->stmt)) == SQLITE_ROW) {
    out.push_back(static_cast<uint32_t>(sqlite3_column_int64(s->stmt, 0)));
  }
  if (rc != SQLITE_DONE) return SqlError(db_, "watches");
  return out;
}

Expected<std::vector<WatchRequest>> StateStore::WatchRequests() {
  auto s = Prepare(db_, "SELECT job_id, uid FROM watches ORDER BY job_id, uid");
  if (!s) return s.error();
  std::vector<WatchRequest> out;
  int rc;
  while ((rc = sqlite3_step(s->stmt)) == SQLITE_ROW) {
    WatchRequest w{.job_id = static_cast<uint32_t>(sqlite3_column_int64(s->stmt, 0)), .uid = {}};
    if (auto uid = OptInt(s->stmt, 1)) w.uid = static_cast<uint32_t>(*uid);
    out.push_back(w);
  }
  if (rc != SQLITE_DONE) return SqlError(db_, "watches");
  return out;
}

Expected<void> StateStore::RemoveWatch(uint32_t job_id) {
  auto s = Prepare(db_, "DELETE FROM watches WHERE job_id=?1");
  if (!s) return s.error();
  sqlite3_bind_int64(s->stmt, 1, job_id);
  if (sqlite3_step(s->stmt) != SQLITE_DONE) return SqlError(db_, "remove watch");
  return {};
}

Expected<void> StateStore::RemoveWatch(uint32_t job_id, std::optional<uint32_t> uid) {
  auto s = Prepare(db_, "DELETE FROM watches WHERE job_id=?1 AND uid IS ?2");
  if (!s) return s.error();
  sqlite3_bind_int64(s->stmt, 1, job_id);
  BindOptional(s->stmt, 2, uid ? std::optional<int64_t>(*uid) : std::nullopt);
  if (sqlite3_step(s->stmt) != SQLITE_DONE) return SqlError(db_, "remove watch");
  return {};
}

Expected<size_t> StateStore::PendingWatches(uint32_t uid) {
  auto s = Prepare(db_, "SELECT count(*) FROM watches WHERE uid=?1");
  if (!s) return s.error();
  sqlite3_bind_int64(s->stmt, 1, uid);
  if (sqlite3_step(s->stmt) != SQLITE_ROW) return SqlError(db_, "pending watches");
  return static_cast<size_t>(sqlite3_column_int64(s->stmt, 0));
}

Expected<void> StateStore::SaveHostBaselines(uint32_t job_id,
                                             const std::map<std::string, HostBaseline>& baselines,
                                             double at) {
  for (const auto& [host, baseline] : baselines) {
    auto stmt = Cached(
        "INSERT INTO host_baselines (job_id, host, json, updated_at) VALUES (?1, ?2, ?3, ?4) "
        "ON CONFLICT(job_id, host) DO UPDATE SET json = excluded.json, "
        "updated_at = excluded.updated_at");
    if (!stmt) return stmt.error();
    sqlite3_bind_int64(*stmt, 1, job_id);
    BindText(*stmt, 2, host);
    BindText(*stmt, 3, BaselineJson(baseline));
    sqlite3_bind_double(*stmt, 4, at);
    if (sqlite3_step(*stmt) != SQLITE_DONE) return SqlError(db_, "save host baselines");
  }
  return {};
}

Expected<std::map<std::string, HostBaseline>> StateStore::HostBaselines(uint32_t job_id) {
  auto s = Prepare(db_, "SELECT host, json FROM host_baselines WHERE job_id=?1 ORDER BY host");
  if (!s) return s.error();
  sqlite3_bind_int64(s->stmt, 1, job_id);
  std::map<std::string, HostBaseline> out;
  int rc;
  while ((rc = sqlite3_step(s->stmt)) == SQLITE_ROW) {
    if (auto b = ReadBaseline(Text(s->stmt, 1))) out.emplace(Text(s->stmt, 0), std::move(*b));
  }
  if (rc != SQLITE_DONE) return SqlError(db_, "host baselines");
  return out;
}

Expected<void> StateStore::DeleteHostBaselines(uint32_t job_id) {
  auto s = Prepare(db_, "DELETE FROM host_baselines WHERE job_id=?1");
  if (!s) return s.error();
  sqlite3_bind_int64(s->stmt, 1, job_id);
  if (sqlite3_step(s->stmt) != SQLITE_DONE) return SqlError(db_, "delete host baselines");
  return {};
}

Expected<void> StateStore::SaveIncidentChart(int64_t incident_id, const std::string& png) {
  auto s =
      Prepare(db_, "INSERT OR REPLACE INTO incident_charts (incident_id, png) VALUES (?1, ?2)");
  if (!s) return s.error();
  sqlite3_bind_int64(s->stmt, 1, incident_id);
  sqlite3_bind_blob(s->stmt, 2, png.data(), static_cast<int>(png.size()), SQLITE_TRANSIENT);
  if (sqlite3_step(s->stmt) != SQLITE_DONE) return SqlError(db_, "save incident chart");
  auto trim = Prepare(db_,
                      "DELETE FROM incident_charts WHERE incident_id NOT IN (SELECT incident_id "
                      "FROM incident_charts ORDER BY incident_id DESC LIMIT ?1)");
  if (!trim) return trim.error();
  sqlite3_bind_int(trim->stmt, 1, kKeptCharts);
  if (sqlite3_step(trim->stmt) != SQLITE_DONE) return SqlError(db_, "trim incident charts");
  return {};
}

Expected<void> StateStore::AddRecoveryStep(int64_t incident_id, uint32_t job_id,
                                           const RecoveryStep& step) {
  auto s = Prepare(db_,
                   "INSERT INTO recovery_steps (incident_id, job_id, step, at, detail) "
                   "VALUES (?1, ?2, ?3, ?4, ?5)");
  if (!s) return s.error();
  sqlite3_bind_int64(s->stmt, 1, incident_id);
  sqlite3_bind_int64(s->stmt, 2, job_id);
  BindText(s->stmt, 3, step.step);
  sqlite3_bind_double(s->stmt, 4, step.at);
  BindText(s->stmt, 5, step.detail);
  if (sqlite3_step(s->stmt) != SQLITE_DONE) return SqlError(db_, "add recovery step");
  return {};
}

Expected<std::vector<RecoveryStep>> StateStore::RecoverySteps(int64_t incident_id) {
  auto s = Prepare(
      db_, "SELECT step, at, detail FROM recovery_steps WHERE incident_id = ?1 ORDER BY id");
  if (!s) return s.error();
  sqlite3_bind_int64(s->stmt, 1, incident_id);
  std::vector<RecoveryStep> out;
  int rc;
  while ((rc = sqlite3_step(s->stmt)) == SQLITE_ROW) {
    out.push_back({Text(s->stmt, 0), sqlite3_column_double(s->stmt, 1), Text(s->stmt, 2)});
  }
  if (rc != SQLITE_DONE) return SqlError(db_, "recovery steps");
  return out;
}

Expected<int> StateStore::RecoveryRequeues(uint32_t job_id) {
  auto s = Prepare(db_, "SELECT count(*) FROM recovery_steps WHERE job_id = ?1 AND step = ?2");
  if (!s) return s.error();
  sqlite3_bind_int64(s->stmt, 1, job_id);
  BindText(s->stmt, 2, std::string(kStepRequeue));
  if (sqlite3_step(s->stmt) != SQLITE_ROW) return SqlError(db_, "recovery requeues");
  return sqlite3_column_int(s->stmt, 0);
}

Expected<void> StateStore::HoldRecovery(uint32_t job_id, double at, uint32_t by_uid) {
  auto s = Prepare(
      db_, "INSERT OR REPLACE INTO recovery_holds (job_id, at, by_uid) VALUES (?1, ?2, ?3)");
  if (!s) return s.error();
  sqlite3_bind_int64(s->stmt, 1, job_id);
  sqlite3_bind_double(s->stmt, 2, at);
  sqlite3_bind_int64(s->stmt, 3, by_uid);
  if (sqlite3_step(s->stmt) != SQLITE_DONE) return SqlError(db_, "hold recovery");
  return {};
}

Expected<bool> StateStore::RecoveryHeld(uint32_t job_id) {
  auto s = Prepare(db_, "SELECT 1 FROM recovery_holds WHERE job_id = ?1");
  if (!s) return s.error();
  sqlite3_bind_int64(s->stmt, 1, job_id);
  const int rc = sqlite3_step(s->stmt);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  return SqlError(db_, "recovery hold");
}

Expected<std::optional<std::pair<int64_t, std::string>>> StateStore::LatestIncidentChart(
    uint32_t job_id) {
  auto s = Prepare(db_,
                   "SELECT c.incident_id, c.png FROM incident_charts c JOIN incidents i ON "
                   "i.id = c.incident_id WHERE i.job_id = ?1 ORDER BY c.incident_id DESC LIMIT 1");
  if (!s) return s.error();
  sqlite3_bind_int64(s->stmt, 1, job_id);
  const int rc = sqlite3_step(s->stmt);
  if (rc == SQLITE_DONE) return std::optional<std::pair<int64_t, std::string>>{};
  if (rc != SQLITE_ROW) return SqlError(db_, "incident chart");
  const auto* bytes = static_cast<const char*>(sqlite3_column_blob(s->stmt, 1));
  const int size = sqlite3_column_bytes(s->stmt, 1);
  return std::optional<std::pair<int64_t, std::string>>{
      {sqlite3_column_int64(s->stmt, 0), std::string(bytes ? bytes : "", bytes ? size : 0)}};
}

Expected<void> StateStore::SetDaemonState(const std::string& key, const std::string& value,
                                          double at) {
  auto stmt = Cached(
      "INSERT INTO daemon_state (key, value, updated_at) VALUES (?1, ?2, ?3) "
      "ON CONFLICT(key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at");
  if (!stmt) return stmt.error();
  BindText(*stmt, 1, key);
  BindText(*stmt, 2, value);
  sqlite3_bind_double(*stmt, 3, at);
  if (sqlite3_step(*stmt) != SQLITE_DONE) return SqlError(db_, "set daemon state " + key);
  return {};
}

Expected<void> StateStore::ClearDaemonState(const std::string& key) {
  auto stmt = Cached("DELETE FROM daemon_state WHERE key = ?1");
  if (!stmt) return stmt.error();
  BindText(*stmt, 1, key);
  if (sqlite3_step(*stmt) != SQLITE_DONE) return SqlError(db_, "clear daemon state " + key);
  return {};
}

Expected<std::optional<std::string>> StateStore::GetDaemonState(const std::string& key) {
  auto stmt = Cached("SELECT value FROM daemon_state WHERE key = ?1");
  if (!stmt) return stmt.error();
  BindText(*stmt, 1, key);
  const int rc = sqlite3_step(*stmt);
  if (rc == SQLITE_DONE) return std::optional<std::string>();
  if (rc != SQLITE_ROW) return SqlError(db_, "get daemon state " + key);
  return std::optional<std::string>(Text(*stmt, 0));
}

}  // namespace jobmon::monitor
