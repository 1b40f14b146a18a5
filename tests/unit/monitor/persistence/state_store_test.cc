// StateStore: restart-safe incidents (never two open), a database from a
// newer jobmon refused, a new database and its WAL not world-readable.
#include "jobmon/monitor/state_store.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <map>
#include <string>

#include "monitor_test_support.h"

namespace jobmon::monitor {
namespace {

using test_support::TempDir;
namespace fs = std::filesystem;

// Runs `sql` on the database file at `path` (made by an older jobmon, or
// taken back to an older schema by the test).
void RunSql(const std::string& path, const char* sql) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  EXPECT_EQ(sqlite3_exec(db, sql, nullptr, nullptr, nullptr), SQLITE_OK) << sqlite3_errmsg(db);
  sqlite3_close(db);
}

// A database made by today's code, then taken back to an older schema.
void Downgrade(const std::string& path, const char* sql) {
  {
    auto store = StateStore::Open(path);
    ASSERT_TRUE(store.ok()) << store.error().message;
  }
  RunSql(path, sql);
}

// A job's progress row is written every poll, in place once it exists:
// each save replaces every field of the last, a field gone included, and
// the other jobs' rows are left alone.
TEST(StateStoreTest, ASecondProgressSaveReplacesEveryFieldOfTheFirst) {
  TempDir dir;
  auto store = StateStore::Open((dir.path / "state.db").string());
  ASSERT_TRUE(store.ok()) << store.error().message;
  for (uint32_t id : {7u, 8u}) {
    JobRecord job;
    job.job_id = id;
    job.user = "alice";
    job.slurm_state = "RUNNING";
    ASSERT_TRUE((*store)->UpsertJob(job).ok());
  }
  ProgressRecord first;
  first.job_id = 7;
  first.log_inode = 1;
  first.log_offset = 100;
  first.last_step = 10;
  first.phase = "training";
  first.checkpoint_period = 500;
  first.profile = "maxtext";
  first.threshold_reason = "k x the p99 gap";
  first.stated_step_times = true;
  first.updated_at = 1000;
  ASSERT_TRUE((*store)->SaveProgress(first).ok());
  ProgressRecord other = first;
  other.job_id = 8;
  ASSERT_TRUE((*store)->SaveProgress(other).ok());

  ProgressRecord second;
  second.job_id = 7;
  second.log_inode = 2;
  second.log_device = 3;
  second.log_offset = 250;
  second.last_step = 20;
  second.last_step_time = 1009.5;
  second.phase = "stalled";
  second.median_interval = 1.5;
  second.threshold_seconds = 300;
  second.updated_at = 1010;
  ASSERT_TRUE((*store)->SaveProgress(second).ok());
  auto saved = (*store)->GetProgress(7).value();
  ASSERT_TRUE(saved);
  EXPECT_EQ(saved->log_inode, 2u);
  EXPECT_EQ(saved->log_device, 3u);
  EXPECT_EQ(saved->log_offset, 250);
  EXPECT_EQ(saved->last_step, 20);
  EXPECT_EQ(saved->last_step_time, 1009.5);
  EXPECT_EQ(saved->phase, "stalled");
  EXPECT_EQ(saved->median_interval, 1.5);
  EXPECT_EQ(saved->threshold_seconds, 300);
  EXPECT_FALSE(saved->checkpoint_period) << "a field the second save lacks is gone";
  EXPECT_EQ(saved->profile, "");
  EXPECT_EQ(saved->threshold_reason, "");
  EXPECT_FALSE(saved->stated_step_times);
  EXPECT_EQ(saved->updated_at, 1010);
  auto untouched = (*store)->GetProgress(8).value();
  ASSERT_TRUE(untouched);
  EXPECT_EQ(untouched->last_step, 10);
  EXPECT_EQ(untouched->checkpoint_period, 500);
}

TEST(StateStoreTest, SurvivesARestartAndNeverDuplicatesAnOpenIncident) {
  TempDir dir;
  std::string path = (dir.path / "state.db").string();
  {
    auto store = StateStore::Open(path);
    ASSERT_TRUE(store.ok()) << store.error().message;
    JobRecord job;
    job.job_id = 42;
    job.name = "llama";
    job.user = "alice";
    job.log_path = "/shared/llama-42.out";
    job.diag_dir = "/shared/jobmon-diag-42";
    job.source = "manifest";
    job.slurm_state = "RUNNING";
    job.first_seen = job.last_seen = 1000;
    ASSERT_TRUE((*store)->UpsertJob(job).ok());
    ProgressRecord p;
    p.job_id = 42;
    p.log_inode = 777;
    p.log_device = 9;
    p.log_offset = 123456;
    p.last_step = 1999;
    p.last_step_time = 1500.5;
    p.phase = "stalled";
    p.p99_interval = 1.02;
    p.updated_at = 1510;
    p.first_step_time = 1020.25;
    ASSERT_TRUE((*store)->SaveProgress(p).ok());
    IncidentRecord incident;
    incident.job_id = 42;
    incident.klass = "hang/busy-wait";
    incident.opened_at = 1600;
    incident.summary = "GPUs busy at idle-level power";
    auto opened = (*store)->OpenIncident(incident);
    ASSERT_TRUE(opened.ok()) << opened.error().message;
    EXPECT_TRUE(opened->second);
  }  // the daemon dies here
  auto store = StateStore::Open(path);
  ASSERT_TRUE(store.ok());
  auto progress = (*store)->GetProgress(42).value();
  ASSERT_TRUE(progress.has_value());
  EXPECT_EQ(progress->log_offset, 123456);
  EXPECT_EQ(*progress->last_step, 1999);
  EXPECT_EQ(progress->first_step_time, std::optional<double>(1020.25));
  EXPECT_FALSE(progress->checkpoint_period.has_value());
  IncidentRecord again;
  again.job_id = 42;
  again.klass = "hang/busy-wait";
  again.opened_at = 1700;
  again.summary = "the restarted daemon sees the same stall";
  auto reopened = (*store)->OpenIncident(again).value();
  EXPECT_FALSE(reopened.second) << "not a second incident";
  EXPECT_EQ((*store)->Incidents(42)->size(), 1u);
  ASSERT_TRUE((*store)->CloseIncident(reopened.first, 1800, "resumed").ok());
  EXPECT_FALSE((*store)->OpenIncidentOf(42)->has_value());
  auto next = (*store)->OpenIncident(again).value();
  EXPECT_TRUE(next.second) << "after a resume a new stall is a new incident";
  auto all = (*store)->Incidents(42).value();
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0].close_reason, "resumed");
  EXPECT_EQ((*store)->ListJobs()->front().log_path, "/shared/llama-42.out");
}

TEST(StateStoreTest, ADatabaseFromANewerJobmonIsRefused) {
  TempDir dir;
  std::string path = (dir.path / "state.db").string();
  ASSERT_TRUE(StateStore::Open(path).ok());
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, "PRAGMA user_version=99", nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(db);
  auto store = StateStore::Open(path);
  ASSERT_FALSE(store.ok());
  EXPECT_NE(store.error().message.find("newer jobmon"), std::string::npos);
  auto nowhere = StateStore::Open("/nonexistent/dir/state.db");
  EXPECT_FALSE(nowhere.ok());
}

// The state DB (job names, users, log paths, alert
// payloads) is not world-readable, whatever the umask the daemon runs under.
TEST(StateStoreTest, ANewDatabaseAndItsWalAreNotWorldReadable) {
  TempDir dir;
  const std::string path = (dir.path / "state.db").string();
  for (mode_t mask : {mode_t{0}, mode_t{022}, mode_t{077}}) {
    std::filesystem::remove(path);
    std::filesystem::remove(path + "-wal");
    std::filesystem::remove(path + "-shm");
    const mode_t old_mask = umask(mask);
    auto store = StateStore::Open(path);
    bool wrote = false;
    if (store.ok()) {
      JobRecord job;
      job.job_id = 7;
      job.first_seen = job.last_seen = 1;
      wrote = (*store)->UpsertJob(job).ok();
    }
    umask(old_mask);
    ASSERT_TRUE(store.ok()) << store.error().message;
    ASSERT_TRUE(wrote);
    for (const std::string& file : {path, path + "-wal", path + "-shm"}) {
      struct stat st {};
      ASSERT_EQ(stat(file.c_str(), &st), 0) << file << " (WAL mode, open connection)";
      EXPECT_EQ(st.st_mode & 07777, 0640u) << file << " umask " << std::oct << mask;
    }
  }
  // An existing database keeps the mode its operator gave it.
  ASSERT_EQ(chmod(path.c_str(), 0600), 0);
  ASSERT_TRUE(StateStore::Open(path).ok());
  struct stat st {};
  ASSERT_EQ(stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0600u);
}

// Schema 4 (before the end-of-job diagnosis): its rows stay readable, the
// columns are added; the diagnosis is written only by SetDiagnosis, so the
// daemon's later writes of the job keep it.
TEST(StateStoreTest, MigratesASchema4DatabaseToTheDiagnosis) {
  test_support::TempDir dir;
  const std::string path = (dir.path / "v4.db").string();
  RunSql(path, R"sql(
CREATE TABLE jobs (job_id INTEGER PRIMARY KEY,
  name TEXT NOT NULL DEFAULT '', user TEXT NOT NULL DEFAULT '',
  log_path TEXT NOT NULL DEFAULT '', diag_dir TEXT NOT NULL DEFAULT '',
  source TEXT NOT NULL DEFAULT '', slurm_state TEXT NOT NULL DEFAULT '',
  first_seen REAL NOT NULL, last_seen REAL NOT NULL, ended_at REAL,
  partition TEXT NOT NULL DEFAULT '', node_list TEXT NOT NULL DEFAULT '', start_time REAL,
  final_class TEXT NOT NULL DEFAULT '', final_status TEXT NOT NULL DEFAULT '', uid INTEGER);
CREATE TABLE watches (job_id INTEGER PRIMARY KEY, requested_at REAL NOT NULL, uid INTEGER);
INSERT INTO jobs (job_id, name, user, first_seen, last_seen, uid)
  VALUES (5, 'old', 'alice', 1, 2, 1000);
PRAGMA user_version = 4;)sql");
  auto store = StateStore::Open(path);
  ASSERT_TRUE(store.ok()) << store.error().message;
  auto old = (*store)->GetJob(5).value();
  ASSERT_TRUE(old);
  EXPECT_EQ(old->name, "old");
  EXPECT_EQ(old->uid, std::optional<uint32_t>(1000));
  EXPECT_EQ(old->diagnosis, "");
  EXPECT_FALSE(old->diagnosed_at);
  ASSERT_TRUE((*store)->SetDiagnosis(5, "hang: straggler\n", 50).ok());
  JobRecord later = *old;  // the daemon's in-memory record, without the diagnosis
  later.slurm_state = "COMPLETED";
  ASSERT_TRUE((*store)->UpsertJob(later).ok());
  store.value().reset();
  auto reader = StateStore::OpenReadOnly(path);
  ASSERT_TRUE(reader.ok()) << reader.error().message;
  auto read = (*reader)->GetJob(5).value();
  EXPECT_EQ(read->slurm_state, "COMPLETED");
  EXPECT_EQ(read->diagnosis, "hang: straggler\n") << "UpsertJob keeps it";
  EXPECT_EQ(read->diagnosed_at, std::optional<double>(50));
}

// A --diag job's per-host baselines survive a restart, are
// upserted per host, and go when the job's rows are deleted. A database of
// version 8 made before the table existed gets it on open.
TEST(StateStoreTest, HostBaselinesSurviveARestartUntilDeleted) {
  TempDir dir;
  const std::string path = (dir.path / "state.db").string();
  Downgrade(path, "DROP TABLE host_baselines;");
  std::map<std::string, HostBaseline> saved;
  saved["node1"].power = 700.5;
  saved["node1"].tcp_retransmit_rate = 99.25;
  saved["node1"].tcp_retransmit_baseline = 0.2;
  saved["node1"].sm_clock_max = 1980;
  saved["node1"].idle_floors["0"] = {.with_context = 120, .device = 71};
  saved["node1"].idle_floors["1"] = {.with_context = std::nullopt, .device = 70};
  saved["node1"].training_from = 1030;
  saved["node1"].training_until = 1295.5;
  saved["node2"].power = 680;
  saved["node2"].training_from = 1030;
  saved["node2"].training_until = 1295.5;
  {
    auto store = StateStore::Open(path);
    ASSERT_TRUE(store.ok()) << store.error().message;
    for (uint32_t id : {42u, 43u}) {
      JobRecord job;
      job.job_id = id;
      job.first_seen = job.last_seen = 1000;
      ASSERT_TRUE((*store)->UpsertJob(job).ok());
    }
    ASSERT_TRUE((*store)->Begin().ok());  // in the cycle's transaction
    auto ok = (*store)->SaveHostBaselines(42, saved, 1300);
    ASSERT_TRUE(ok.ok()) << ok.error().message;
    ASSERT_TRUE((*store)->SaveHostBaselines(43, {{"node9", saved["node2"]}}, 1300).ok());
    ASSERT_TRUE((*store)->Commit().ok());
  }  // the daemon stops
  auto store = StateStore::Open(path);
  ASSERT_TRUE(store.ok());
  EXPECT_EQ((*store)->HostBaselines(42).value(), saved);
  EXPECT_TRUE((*store)->HostBaselines(44).value().empty());
  // Saved again: node1 is replaced, node2 (not in this save) stays.
  HostBaseline later = saved["node1"];
  later.power = 710;
  later.training_until = 1355;
  ASSERT_TRUE((*store)->SaveHostBaselines(42, {{"node1", later}}, 1360).ok());
  auto loaded = (*store)->HostBaselines(42).value();
  EXPECT_EQ(loaded.at("node1"), later);
  EXPECT_EQ(loaded.at("node2"), saved["node2"]);
  // A row that is not a baseline (a hand-edited database) reads as none.
  RunSql(path, "INSERT INTO host_baselines VALUES (42, 'node3', 'not json', 1);");
  EXPECT_EQ((*store)->HostBaselines(42).value().size(), 2u);
  ASSERT_TRUE((*store)->DeleteHostBaselines(42).ok());
  EXPECT_TRUE((*store)->HostBaselines(42).value().empty());
  EXPECT_EQ((*store)->HostBaselines(43).value().size(), 1u) << "another job's rows stay";
}

}  // namespace
}  // namespace jobmon::monitor

namespace jobmon::monitor {
namespace {

// Schema 3 (before the owners' uids): its rows stay readable, the columns
// are added, and a read-only reader then sees version 4.
TEST(StateStoreTest, MigratesASchema3DatabaseToOwnersUids) {
  test_support::TempDir dir;
  const std::string path = (dir.path / "v3.db").string();
  RunSql(path, R"sql(
CREATE TABLE jobs (job_id INTEGER PRIMARY KEY,
  name TEXT NOT NULL DEFAULT '', user TEXT NOT NULL DEFAULT '',
  log_path TEXT NOT NULL DEFAULT '', diag_dir TEXT NOT NULL DEFAULT '',
  source TEXT NOT NULL DEFAULT '', slurm_state TEXT NOT NULL DEFAULT '',
  first_seen REAL NOT NULL, last_seen REAL NOT NULL, ended_at REAL,
  partition TEXT NOT NULL DEFAULT '', node_list TEXT NOT NULL DEFAULT '', start_time REAL,
  final_class TEXT NOT NULL DEFAULT '', final_status TEXT NOT NULL DEFAULT '');
CREATE TABLE watches (job_id INTEGER PRIMARY KEY, requested_at REAL NOT NULL);
INSERT INTO jobs (job_id, name, user, first_seen, last_seen) VALUES (5, 'old', 'alice', 1, 2);
INSERT INTO watches VALUES (6, 1);
PRAGMA user_version = 3;)sql");
  {
    auto refused = StateStore::OpenReadOnly(path);
    EXPECT_FALSE(refused.ok()) << "a reader does not migrate";
  }
  auto store = StateStore::Open(path);
  ASSERT_TRUE(store.ok()) << store.error().message;
  auto old = (*store)->GetJob(5).value();
  ASSERT_TRUE(old);
  EXPECT_EQ(old->name, "old");
  EXPECT_FALSE(old->uid);
  EXPECT_EQ((*store)->WatchRequests().value(), (std::vector<WatchRequest>{{6, std::nullopt}}));

  JobRecord updated = *old;
  updated.uid = 1000;
  ASSERT_TRUE((*store)->UpsertJob(updated).ok());
  updated.uid.reset();  // a later write without the uid keeps the known one
  ASSERT_TRUE((*store)->UpsertJob(updated).ok());
  EXPECT_EQ((*store)->GetJob(5).value()->uid, std::optional<uint32_t>(1000));
  ASSERT_TRUE((*store)->AddWatch(7, 2, 1000u).ok());
  EXPECT_EQ((*store)->WatchRequests().value(),
            (std::vector<WatchRequest>{{6, std::nullopt}, {7, 1000u}}));
  store.value().reset();
  auto reader = StateStore::OpenReadOnly(path);
  ASSERT_TRUE(reader.ok()) << reader.error().message;
  EXPECT_EQ((*reader)->GetJob(5).value()->uid, std::optional<uint32_t>(1000));
}

// Version 5 had no first_step_time: the column is added, an old row reads
// as "not known", and the migrated database keeps a new one.
TEST(StateStoreTest, MigratesASchema5DatabaseToTheFirstStepTime) {
  test_support::TempDir dir;
  const std::string path = (dir.path / "v5.db").string();
  Downgrade(path, R"sql(
DROP TABLE progress;
CREATE TABLE progress (
  job_id INTEGER PRIMARY KEY REFERENCES jobs(job_id),
  log_inode INTEGER NOT NULL, log_device INTEGER NOT NULL, log_offset INTEGER NOT NULL,
  last_step INTEGER, last_step_time REAL, phase TEXT NOT NULL,
  median_interval REAL, p99_interval REAL, checkpoint_period INTEGER,
  longest_checkpoint_pause REAL, updated_at REAL NOT NULL,
  baseline_interval REAL, recent_interval REAL, profile TEXT NOT NULL DEFAULT '');
INSERT INTO jobs (job_id, first_seen, last_seen) VALUES (8, 1, 2);
INSERT INTO progress (job_id, log_inode, log_device, log_offset, last_step, phase, updated_at)
  VALUES (8, 1, 2, 300, 59, 'training', 2);
PRAGMA user_version = 5;)sql");
  auto store = StateStore::Open(path);
  ASSERT_TRUE(store.ok()) << store.error().message;
  auto old = (*store)->GetProgress(8).value();
  ASSERT_TRUE(old);
  EXPECT_EQ(old->last_step, std::optional<int64_t>(59));
  EXPECT_FALSE(old->first_step_time);
  ProgressRecord now = *old;
  now.first_step_time = 1.5;
  ASSERT_TRUE((*store)->SaveProgress(now).ok());
  EXPECT_EQ((*store)->GetProgress(8).value()->first_step_time, std::optional<double>(1.5));
  store.value().reset();
  EXPECT_TRUE(StateStore::OpenReadOnly(path).ok()) << "now at the current version";
}

// A store where root (or an admin), uid 1000 and uid 1001 asked to watch job 6.
std::unique_ptr<StateStore> StoreWithWatchesOfJob6(const TempDir& dir) {
  auto store = StateStore::Open((dir.path / "state.db").string());
  EXPECT_TRUE(store.ok()) << store.error().message;
  if (!store.ok()) return nullptr;
  EXPECT_TRUE((*store)->AddWatch(6, 1).ok());
  EXPECT_TRUE((*store)->AddWatch(6, 2, 1000u).ok());
  EXPECT_TRUE((*store)->AddWatch(6, 3, 1001u).ok());
  return std::move(store.value());
}

// Watches were keyed by job id alone, so a user's watch
// of a job replaced an admin's (and the daemon then refused it as the
// user's, dropping the admin's request with it).
TEST(StateStoreTest, AUsersWatchDoesNotReplaceAnAdminsWatch) {
  TempDir dir;
  auto store = StoreWithWatchesOfJob6(dir);
  ASSERT_TRUE(store);
  ASSERT_TRUE(store->AddWatch(6, 4, 1000u).ok());  // asked again: one row
  ASSERT_TRUE(store->AddWatch(6, 5).ok());
  EXPECT_EQ(store->WatchRequests().value(),
            (std::vector<WatchRequest>{{6, std::nullopt}, {6, 1000u}, {6, 1001u}}));
}

// The daemon drops one asker's refused watch, or every request for a job it
// now follows; the API counts what a user has pending.
TEST(StateStoreTest, RemovesOneAskersWatchOrAllOfAJobs) {
  TempDir dir;
  auto store = StoreWithWatchesOfJob6(dir);
  ASSERT_TRUE(store);
  ASSERT_TRUE(store->AddWatch(7, 3, 1001u).ok());
  ASSERT_TRUE(store->RemoveWatch(6, 1000u).ok());
  EXPECT_EQ(store->WatchRequests().value(),
            (std::vector<WatchRequest>{{6, std::nullopt}, {6, 1001u}, {7, 1001u}}));
  EXPECT_EQ(store->PendingWatches(1001).value(), 2u);
  EXPECT_EQ(store->PendingWatches(1000).value(), 0u);
  ASSERT_TRUE(store->RemoveWatch(6).ok());
  EXPECT_EQ(store->WatchRequests().value(), (std::vector<WatchRequest>{{7, 1001u}}))
      << "every request for job 6, none for 7";
}

// Version 6 keyed watches by job id: its rows survive the new key.
TEST(StateStoreTest, MigratesASchema6DatabaseToAWatchPerAsker) {
  TempDir dir;
  const std::string path = (dir.path / "v6.db").string();
  Downgrade(path, R"sql(
DROP TABLE watches;
CREATE TABLE watches (job_id INTEGER PRIMARY KEY, requested_at REAL NOT NULL, uid INTEGER);
INSERT INTO watches VALUES (6, 1, NULL);
INSERT INTO watches VALUES (7, 2, 1000);
PRAGMA user_version = 6;)sql");
  auto store = StateStore::Open(path);
  ASSERT_TRUE(store.ok()) << store.error().message;
  EXPECT_EQ((*store)->WatchRequests().value(),
            (std::vector<WatchRequest>{{6, std::nullopt}, {7, 1000u}}));
  ASSERT_TRUE((*store)->AddWatch(6, 3, 1000u).ok());
  EXPECT_EQ((*store)->WatchRequests().value(),
            (std::vector<WatchRequest>{{6, std::nullopt}, {6, 1000u}, {7, 1000u}}));
  store.value().reset();
  EXPECT_TRUE(StateStore::OpenReadOnly(path).ok()) << "now at the current version";
  auto again = StateStore::Open(path);  // a second open migrates nothing
  ASSERT_TRUE(again.ok()) << again.error().message;
  EXPECT_EQ((*again)->WatchRequests().value().size(), 3u);
}

}  // namespace
}  // namespace jobmon::monitor
