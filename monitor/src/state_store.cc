#include "jobmon/monitor/state_store.h"

#include <utility>

namespace jobmon::monitor {
namespace {

const char* const kSchema = R"sql(
CREATE TABLE IF NOT EXISTS jobs (
  job_id INTEGER PRIMARY KEY,
  name TEXT NOT NULL DEFAULT '', user TEXT NOT NULL DEFAULT '',
  log_path TEXT NOT NULL DEFAULT '', diag_dir TEXT NOT NULL DEFAULT '',
  source TEXT NOT NULL DEFAULT '', slurm_state TEXT NOT NULL DEFAULT '',
  first_seen REAL NOT NULL, last_seen REAL NOT NULL, ended_at REAL);
CREATE TABLE IF NOT EXISTS progress (
  job_id INTEGER PRIMARY KEY REFERENCES jobs(job_id),
  log_inode INTEGER NOT NULL, log_device INTEGER NOT NULL, log_offset INTEGER NOT NULL,
  last_step INTEGER, last_step_time REAL, phase TEXT NOT NULL,
  median_interval REAL, p99_interval REAL, checkpoint_period INTEGER,
  longest_checkpoint_pause REAL, updated_at REAL NOT NULL);
CREATE TABLE IF NOT EXISTS incidents (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  job_id INTEGER NOT NULL REFERENCES jobs(job_id),
  class TEXT NOT NULL, state TEXT NOT NULL CHECK (state IN ('open', 'closed')),
  opened_at REAL NOT NULL, closed_at REAL,
  summary TEXT NOT NULL, evidence_json TEXT NOT NULL, close_reason TEXT NOT NULL DEFAULT '');
-- At most one open incident per job: a restarted daemon finds it, never duplicates it.
CREATE UNIQUE INDEX IF NOT EXISTS one_open_incident ON incidents(job_id) WHERE state = 'open';
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
  return j;
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
  r.evidence_json = Text(s, 7);
  r.close_reason = Text(s, 8);
  return r;
}

constexpr const char* kJobColumns =
    "job_id, name, user, log_path, diag_dir, source, slurm_state, first_seen, last_seen, ended_at";
constexpr const char* kIncidentColumns =
    "id, job_id, class, state, opened_at, closed_at, summary, evidence_json, close_reason";

}  // namespace

Expected<std::unique_ptr<StateStore>> StateStore::Open(const std::string& path) {
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
  Statement version;
  if (sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &version.stmt, nullptr) != SQLITE_OK ||
      sqlite3_step(version.stmt) != SQLITE_ROW) {
    return SqlError(db, path + ": schema version");
  }
  int found = sqlite3_column_int(version.stmt, 0);
  if (found > kStateSchemaVersion) {
    return Error{path + ": schema version " + std::to_string(found) +
                 " was written by a newer jobmon (this one knows " +
                 std::to_string(kStateSchemaVersion) + ")"};
  }
  if (auto r = store->Exec(kSchema); !r) return r.error();
  if (auto r = store->Exec(("PRAGMA user_version=" + std::to_string(kStateSchemaVersion)).c_str());
      !r) {
    return r.error();
  }
  return store;
}

StateStore::~StateStore() { sqlite3_close(db_); }

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
  auto s = Prepare(db_,
                   "INSERT INTO jobs (job_id, name, user, log_path, diag_dir, source, slurm_state, "
                   "first_seen, last_seen, ended_at) VALUES (?1,?2,?3,?4,?5,?6,?7,?8,?9,?10) "
                   "ON CONFLICT(job_id) DO UPDATE SET name=?2, user=?3, log_path=?4, diag_dir=?5, "
                   "source=?6, slurm_state=?7, last_seen=?9, ended_at=?10");
  if (!s) return s.error();
  sqlite3_stmt* st = s->stmt;
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
  if (sqlite3_step(st) != SQLITE_DONE) return SqlError(db_, "upsert job");
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
  auto s = Prepare(db_,
                   "INSERT OR REPLACE INTO progress (job_id, log_inode, log_device, log_offset, "
                   "last_step, last_step_time, phase, median_interval, p99_interval, "
                   "checkpoint_period, longest_checkpoint_pause, updated_at) "
                   "VALUES (?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12)");
  if (!s) return s.error();
  sqlite3_stmt* st = s->stmt;
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
  if (sqlite3_step(st) != SQLITE_DONE) return SqlError(db_, "save progress");
  return {};
}

Expected<std::optional<ProgressRecord>> StateStore::GetProgress(uint32_t job_id) {
  auto s = Prepare(db_,
                   "SELECT job_id, log_inode, log_device, log_offset, last_step, last_step_time, "
                   "phase, median_interval, p99_interval, checkpoint_period, "
                   "longest_checkpoint_pause, updated_at FROM progress WHERE job_id=?1");
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
  BindText(st, 5, r.evidence_json);
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

}  // namespace jobmon::monitor
