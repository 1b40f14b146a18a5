// slurm_job_monitor's core without Slurm: a job source that answers what
// the test says (or fails, as an unreachable controller), real log files
// the test appends to, a recording notifier and a clock the test moves.
// Also its config, discovery, file_sd targets, the heartbeat verdict, the
// state store's migration and the exporter scrape over loopback.

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <prometheus/exposer.h>
#include <prometheus/gauge.h>
#include <prometheus/registry.h>
#include <sqlite3.h>
#include <sys/socket.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "jobmon/alerts/notifier.h"
#include "jobmon/monitor/discovery.h"
#include "jobmon/monitor/event_log.h"
#include "jobmon/monitor/heartbeat_classifier.h"
#include "jobmon/monitor/monitor.h"
#include "jobmon/monitor/monitor_config.h"
#include "jobmon/monitor/scrape.h"
#include "jobmon/monitor/state_store.h"

namespace jobmon::monitor {
namespace {

namespace fs = std::filesystem;

class TempDir {
 public:
  TempDir() {
    char pattern[] = "/tmp/jobmon-daemon-test-XXXXXX";
    path_ = mkdtemp(pattern);
  }
  ~TempDir() { fs::remove_all(path_); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

class ScriptedSource : public JobSource {
 public:
  Expected<std::vector<SlurmJob>> ListJobs() override {
    ++calls;
    if (down) return Error{"scontrol exited with 1 (controller unreachable?)"};
    return jobs;
  }
  std::vector<SlurmJob> jobs;
  bool down = false;
  int calls = 0;
};

class RecordingNotifier : public alerts::Notifier {
 public:
  std::string name() const override { return "recording"; }
  Expected<void> Notify(const alerts::Alert& alert) override {
    sent.push_back(alert);
    return {};
  }
  std::vector<alerts::Alert> sent;
};

class RecordingLog : public EventLog {
 public:
  void Write(LogLevel, std::string_view event, const LogFields& fields) override {
    lines.push_back(RenderLogfmt(event, fields));
  }
  bool Has(const std::string& text) const {
    for (const auto& l : lines) {
      if (l.find(text) != std::string::npos) return true;
    }
    return false;
  }
  std::vector<std::string> lines;
};

SlurmJob Job(uint32_t id, const std::string& log, const std::string& state = "RUNNING") {
  SlurmJob j;
  j.job_id = id;
  j.name = "llama";
  j.user = "alice";
  j.state = state;
  j.partition = "gpu";
  j.std_out = log;
  j.node_list = "node[1-2]";
  return j;
}

void Append(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::app) << text;
}

std::string Step(int64_t n) {
  return "0: completed step: " + std::to_string(n) + ", seconds: 1.000, loss: 2.0\n";
}

class MonitorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    log_path = dir.path() + "/run-7.out";
    Append(log_path, "0: starting\n");
    config.state_db = dir.path() + "/state.db";
    config.select.partitions = {"gpu"};  // log-only monitoring of partition gpu
    config.slurm_poll_interval = 1;
    config.slurm_retries = 2;
    config.stall.min_stall_seconds = 30;
    config.stall.startup_grace_seconds = 300;
    source.jobs = {Job(7, log_path)};
    Reopen();
  }
  void Reopen() {
    monitor.reset();
    store.reset();
    store = std::move(StateStore::Open(config.state_db).value());
    monitor = std::make_unique<Monitor>(config, *store, source, notifier, log);
    ASSERT_TRUE(monitor->Restore(now).ok());
  }
  // Steps every second from `from` to `to`, one cycle per step.
  void Train(int64_t from, int64_t to) {
    for (int64_t s = from; s <= to; ++s) {
      Append(log_path, Step(s));
      now += 1;
      monitor->Cycle(now);
    }
  }
  std::vector<IncidentRecord> Incidents() { return store->Incidents(7).value(); }

  TempDir dir;
  std::string log_path;
  MonitorConfig config;
  ScriptedSource source;
  RecordingNotifier notifier;
  RecordingLog log;
  std::unique_ptr<StateStore> store;
  std::unique_ptr<Monitor> monitor;
  double now = 1'000'000;
};

TEST_F(MonitorTest, SelectedJobIsTrackedAndHealthyTrainingRaisesNothing) {
  Train(0, 60);
  EXPECT_EQ(monitor->stats().jobs_tracked, 1u);
  auto job = store->GetJob(7).value();
  ASSERT_TRUE(job);
  EXPECT_EQ(job->source, "config");
  EXPECT_TRUE(Incidents().empty());
  EXPECT_TRUE(notifier.sent.empty());
  EXPECT_EQ(store->GetProgress(7).value()->last_step, 60);
}

TEST_F(MonitorTest, StallOpensOneIncidentAndResumeClosesIt) {
  Train(0, 40);
  for (int i = 0; i < 29; ++i) monitor->Cycle(now += 1);
  EXPECT_TRUE(Incidents().empty()) << "29 s idle is below min_stall 30 s";
  for (int i = 0; i < 10; ++i) monitor->Cycle(now += 1);
  auto incidents = Incidents();
  ASSERT_EQ(incidents.size(), 1u);
  EXPECT_EQ(incidents[0].klass, "hang");  // no exporters: no system evidence
  EXPECT_NE(incidents[0].summary.find("job without --diag"), std::string::npos);
  ASSERT_EQ(notifier.sent.size(), 1u);
  EXPECT_EQ(notifier.sent[0].status, "firing");
  EXPECT_EQ(notifier.sent[0].key, "cluster/7/hang");
  Train(41, 42);
  incidents = Incidents();
  ASSERT_EQ(incidents.size(), 1u);
  EXPECT_EQ(incidents[0].state, "closed");
  EXPECT_EQ(incidents[0].close_reason, "resumed");
  ASSERT_EQ(notifier.sent.size(), 2u);
  EXPECT_EQ(notifier.sent[1].status, "resolved");
  EXPECT_EQ(notifier.sent[1].key, notifier.sent[0].key);
}

TEST_F(MonitorTest, RestartMidIncidentNeitherDuplicatesNorLosesIt) {
  Train(0, 40);
  for (int i = 0; i < 40; ++i) monitor->Cycle(now += 1);
  ASSERT_EQ(Incidents().size(), 1u);
  Reopen();  // the daemon restarts; the job is still hung
  for (int i = 0; i < 20; ++i) monitor->Cycle(now += 1);
  EXPECT_EQ(Incidents().size(), 1u);
  EXPECT_EQ(notifier.sent.size(), 1u);
  EXPECT_TRUE(log.Has("job_restored job=7"));
  Train(41, 41);  // and it resumes after the restart: the same incident closes
  auto incidents = Incidents();
  ASSERT_EQ(incidents.size(), 1u);
  EXPECT_EQ(incidents[0].close_reason, "resumed");
  // The log was not re-read from the start after the restart.
  EXPECT_EQ(store->GetProgress(7).value()->last_step, 41);
}

TEST_F(MonitorTest, UnreachableControllerWarnsAndEndsNothing) {
  Train(0, 10);
  source.down = true;
  const int calls = source.calls;
  Train(11, 40);  // training goes on while Slurm does not answer
  EXPECT_GT(source.calls, calls + 2) << "retried";
  EXPECT_GT(monitor->stats().slurm_failures, 0u);
  EXPECT_FALSE(monitor->stats().slurm_reachable);
  EXPECT_TRUE(log.Has("slurm_unreachable"));
  EXPECT_TRUE(Incidents().empty());
  EXPECT_FALSE(store->GetJob(7).value()->ended_at);
  source.down = false;
  Train(41, 43);
  EXPECT_TRUE(log.Has("slurm_reachable_again"));
  EXPECT_TRUE(monitor->stats().slurm_reachable);
}

TEST_F(MonitorTest, JobEndRecordsTheTriageAndForgetsTheJobAfterRetention) {
  config.ended_retention = 10;
  Reopen();
  Train(0, 20);
  Append(log_path, "0: Traceback (most recent call last):\n0: ValueError: bad batch\n");
  source.jobs = {Job(7, log_path, "FAILED")};
  monitor->Cycle(now += 1);
  auto job = store->GetJob(7).value();
  ASSERT_TRUE(job->ended_at);
  EXPECT_NE(job->final_status, "completed");
  EXPECT_NE(job->final_status, "");
  EXPECT_EQ(job->final_class, "python-exception");
  auto incidents = Incidents();
  ASSERT_EQ(incidents.size(), 1u);
  EXPECT_EQ(incidents[0].klass, "ended/python-exception");
  EXPECT_EQ(incidents[0].state, "closed");
  ASSERT_EQ(notifier.sent.size(), 1u);
  EXPECT_NE(notifier.sent[0].report.find("Traceback (most recent call last)"), std::string::npos)
      << "the triage report travels with the alert";
  for (int i = 0; i < 12; ++i) monitor->Cycle(now += 1);
  EXPECT_EQ(monitor->stats().jobs_tracked, 0u);
  Reopen();  // an ended job is not picked up again
  monitor->Cycle(now += 1);
  EXPECT_EQ(monitor->stats().jobs_tracked, 0u);
}

TEST_F(MonitorTest, WatchedJobOutsideTheSelectionIsTracked) {
  SlurmJob other = Job(8, dir.path() + "/other.out");
  other.partition = "cpu";
  source.jobs.push_back(other);
  monitor->Cycle(now += 1);
  EXPECT_FALSE(store->GetJob(8).value()) << "not selected, not watched";
  ASSERT_TRUE(store->AddWatch(8, now).ok());
  monitor->Cycle(now += 2);
  auto job = store->GetJob(8).value();
  ASSERT_TRUE(job);
  EXPECT_EQ(job->source, "watch");
  EXPECT_TRUE(store->Watches().value().empty()) << "the request is consumed";
}

TEST_F(MonitorTest, SlowdownRaisesTgsDegradationNotAHang) {
  int64_t step = 0;
  for (; step < 40; ++step) {
    Append(log_path, Step(step));
    monitor->Cycle(now += 1);
  }
  for (; step < 60; ++step) {  // 1.5x slower from here
    Append(log_path, "0: completed step: " + std::to_string(step) + ", seconds: 1.500, loss: 2\n");
    now += 1.5;
    monitor->Cycle(now);
  }
  auto incidents = Incidents();
  ASSERT_EQ(incidents.size(), 1u);
  EXPECT_EQ(incidents[0].klass, "tgs-degradation");
  EXPECT_NE(incidents[0].summary.find("1.50x"), std::string::npos) << incidents[0].summary;
}

// ------------------------------------------------------------------ pieces

TEST(TensorBoardProgress, TbStepDrivesAJobWhoseLogHasNoStepLines) {
  TempDir dir;
  const std::string log = dir.path() + "/custom.out";
  Append(log, "epoch 1 ... (a framework without a known step line)\n");
  StallPolicy policy;
  policy.min_stall_seconds = 30;
  JobProgress progress(1, log, policy, 0);
  ASSERT_TRUE(progress.Poll(10).ok());
  MetricWindow window;
  Exposition scrape;
  scrape.samples = {{"tb_step", {{"host", "node1"}}, 40}, {"tb_step", {{"host", "node1"}}, 42}};
  window.AddScrape("node1", 20, scrape);
  auto latest = window.LatestOf("tb_step");
  ASSERT_TRUE(latest);
  EXPECT_EQ(latest->value, 42) << "the furthest event file, not a sum";
  progress.OnTensorBoardStep(static_cast<int64_t>(latest->value), latest->t);
  progress.OnTensorBoardStep(43, 25);
  ProgressState state = progress.Evaluate(30);
  EXPECT_EQ(state.last_step, 43);
  EXPECT_EQ(state.phase, Phase::kTraining);
  EXPECT_EQ(progress.Evaluate(56).phase, Phase::kStalled);
  // Once the log has step lines, they are the source.
  Append(log, "completed step: 100, seconds: 1.0\n");
  ASSERT_TRUE(progress.Poll(60).ok());
  progress.OnTensorBoardStep(500, 61);
  EXPECT_EQ(progress.Evaluate(62).last_step, 100);
}

TEST(MonitorConfig, DefaultsDurationsAndErrorsNamingTheKey) {
  auto defaults = ParseMonitorConfig("");
  ASSERT_TRUE(defaults.ok());
  EXPECT_EQ(defaults->poll_interval, 10);
  EXPECT_EQ(defaults->metrics_listen, "127.0.0.1:9188");
  auto parsed = ParseMonitorConfig(R"(
[monitor]
poll_interval = "2s"
slurm_poll_interval = 45
[monitor.stall]
min_stall = "1m30s"
k = 7
[monitor.select]
partitions = ["gpu"]
name_regex = "llama-.*"
)");
  ASSERT_TRUE(parsed.ok()) << parsed.error().message;
  EXPECT_EQ(parsed->poll_interval, 2);
  EXPECT_EQ(parsed->slurm_poll_interval, 45);
  EXPECT_EQ(parsed->stall.min_stall_seconds, 90);
  EXPECT_EQ(parsed->stall.k, 7);
  EXPECT_EQ(parsed->select.partitions, std::vector<std::string>{"gpu"});
  auto bad = ParseMonitorConfig("[monitor]\npoll_interval = \"soon\"\n", "x.toml");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("x.toml: monitor.poll_interval"), std::string::npos);
  auto wild = ParseMonitorConfig("[monitor]\nmetrics_listen = \"0.0.0.0:9188\"\n");
  ASSERT_FALSE(wild.ok());
  EXPECT_NE(wild.error().message.find("loopback"), std::string::npos);
  EXPECT_FALSE(ParseMonitorConfig("[monitor.select]\nname_regex = \"(\"\n").ok());
  EXPECT_FALSE(ParseMonitorConfig("[monitor\n").ok());
}

TEST(MonitorConfig, TheShippedExampleParsesToTheDefaults) {
  auto shipped = LoadMonitorConfig(JOBMON_SOURCE_DIR "/etc/jobmon.toml");
  ASSERT_TRUE(shipped.ok()) << shipped.error().message;
  MonitorConfig defaults;
  EXPECT_EQ(shipped->poll_interval, defaults.poll_interval);
  EXPECT_EQ(shipped->stall.min_stall_seconds, defaults.stall.min_stall_seconds);
  EXPECT_TRUE(shipped->select.Empty());
  // Every commented key, uncommented, is accepted as written.
  std::ifstream in(JOBMON_SOURCE_DIR "/etc/jobmon.toml");
  std::string text, line;
  bool in_monitor = false;
  while (std::getline(in, line)) {
    if (line.starts_with("[")) in_monitor = line.starts_with("[monitor");
    if (in_monitor && line.starts_with("# ") && line.find(" = ") != std::string::npos &&
        line.find(' ', 2) > line.find(" = ") - 1) {
      line = line.substr(2);
    }
    text += line + "\n";
  }
  auto uncommented = ParseMonitorConfig(text, "uncommented");
  ASSERT_TRUE(uncommented.ok()) << uncommented.error().message;
  EXPECT_EQ(uncommented->select.partitions, std::vector<std::string>{"gpu"});
  EXPECT_EQ(uncommented->stall.k, defaults.stall.k);
  EXPECT_EQ(uncommented->window_seconds, defaults.window_seconds);
}

TEST(Discovery, DiagDirPatternSelectionAndPrecedence) {
  SlurmJob job = Job(42, "/shared/alice/out/run-42.out");
  EXPECT_EQ(DiagDirFor(job, "%o/jobmon-diag-%j"), "/shared/alice/out/jobmon-diag-42");
  EXPECT_EQ(DiagDirFor(job, "/diag/%u/%x-%j-%%"), "/diag/alice/llama-42-%");
  MonitorConfig config;
  auto none = [](const std::string&) { return false; };
  auto all = [](const std::string&) { return true; };
  EXPECT_FALSE(Discover(job, config, {}, none)) << "no manifest, no watch, no selection";
  EXPECT_EQ(Discover(job, config, {}, all)->source, "manifest");
  EXPECT_EQ(Discover(job, config, {42}, none)->source, "watch");
  config.select.users = {"alice"};
  config.select.name_regex = "ll.*";
  EXPECT_EQ(Discover(job, config, {}, none)->source, "config");
  EXPECT_TRUE(Discover(job, config, {}, none)->diag_dir.empty()) << "log only";
  config.select.name_regex = "gpt.*";
  EXPECT_FALSE(Discover(job, config, {}, none));
  job.state = "PENDING";
  EXPECT_FALSE(Discover(job, config, {42}, all)) << "nothing to follow before it starts";
}

TEST(Scrape, FileSdTargets) {
  auto targets = ParseFileSdTargets(
      R"([{"targets": ["10.1.0.11:9400"], "labels": {"host": "node1"}},
          {"targets": ["10.1.0.12:9400", 7]}])");
  ASSERT_TRUE(targets.ok());
  ASSERT_EQ(targets->size(), 2u);
  EXPECT_EQ((*targets)[0].host, "node1");
  EXPECT_EQ((*targets)[1].host, "10.1.0.12:9400") << "no host label: the address names it";
  EXPECT_FALSE(ParseFileSdTargets("{}").ok());
}

TEST(Scrape, ConcurrentScrapesOneDeadlineForAStuckTarget) {
  auto registry = std::make_shared<prometheus::Registry>();
  prometheus::BuildGauge()
      .Name("hw_gpu_power_watts")
      .Register(*registry)
      .Add({{"gpu", "0"}})
      .Set(612);
  prometheus::Exposer exposer("127.0.0.1:0", 1);
  exposer.RegisterCollectable(registry);
  const std::string live = "127.0.0.1:" + std::to_string(exposer.GetListeningPorts().at(0));
  // A socket that accepts connections (the kernel's backlog) but never answers.
  int stuck = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(bind(stuck, reinterpret_cast<sockaddr*>(&address), sizeof address), 0);
  ASSERT_EQ(listen(stuck, 8), 0);
  socklen_t length = sizeof address;
  getsockname(stuck, reinterpret_cast<sockaddr*>(&address), &length);
  const std::string hung = "127.0.0.1:" + std::to_string(ntohs(address.sin_port));
  const auto started = std::chrono::steady_clock::now();
  auto results = ScrapeAll({{"node1", live}, {"node2", hung}, {"node3", hung}}, 0.5);
  const double took =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  close(stuck);
  ASSERT_EQ(results.size(), 3u);
  EXPECT_TRUE(results[0].ok) << results[0].error;
  EXPECT_NE(results[0].body.find("hw_gpu_power_watts{gpu=\"0\"} 612"), std::string::npos);
  EXPECT_FALSE(results[1].ok);
  EXPECT_FALSE(results[2].ok);
  EXPECT_LT(took, 1.5) << "two stuck targets share one 0.5 s deadline";
}

StallEvidence Window(const std::string& host, bool up, double watts) {
  StallEvidence e;
  HostEvidence h;
  h.host = host;
  h.exporter_up = up;
  h.gpu_power = {watts, watts};
  h.gpu_utilization = {97, 96};
  h.baseline_power = 700;
  e.hosts.push_back(h);
  return e;
}

TEST(HeartbeatVerdict, SystemEvidenceDecidesAndTheChecklistIsQuoted) {
  triage::HeartbeatChecklist checklist;
  checklist.verdict = "likely-false-positive";
  checklist.reasons = {"1 of 1 accused task(s) logged their own death: they were alive"};
  HeartbeatInput in;
  in.checklist = checklist;
  in.accused_hosts = {"node2"};
  in.timeout = 10;
  in.at_silence = Window("node2", true, 690);
  in.at_accusation = Window("node2", true, 680);
  HeartbeatVerdict fp = ClassifyHeartbeat(in);
  EXPECT_EQ(fp.klass, "heartbeat/false-positive");
  EXPECT_TRUE(fp.decided_by_system_evidence);
  ASSERT_FALSE(fp.evidence.empty());
  EXPECT_NE(fp.evidence[0].find("node2 at accusation - timeout (10s earlier): exporter up"),
            std::string::npos);
  in.at_accusation = Window("node2", false, 0);  // gone when accused: a real death
  EXPECT_EQ(ClassifyHeartbeat(in).klass, "heartbeat/true-positive");
  in.at_silence.reset();
  in.at_accusation.reset();  // a log-only job: the checklist decides
  HeartbeatVerdict log_only = ClassifyHeartbeat(in);
  EXPECT_EQ(log_only.klass, "heartbeat/false-positive");
  EXPECT_FALSE(log_only.decided_by_system_evidence);
  in.checklist->verdict = "undetermined";
  EXPECT_EQ(ClassifyHeartbeat(in).klass, "heartbeat/true-positive");
}

TEST(StateStoreSchema, MigratesAVersion1Database) {
  TempDir dir;
  const std::string path = dir.path() + "/v1.db";
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  const char* v1 = R"sql(
CREATE TABLE jobs (job_id INTEGER PRIMARY KEY, name TEXT NOT NULL DEFAULT '',
  user TEXT NOT NULL DEFAULT '', log_path TEXT NOT NULL DEFAULT '',
  diag_dir TEXT NOT NULL DEFAULT '', source TEXT NOT NULL DEFAULT '',
  slurm_state TEXT NOT NULL DEFAULT '', first_seen REAL NOT NULL, last_seen REAL NOT NULL,
  ended_at REAL);
CREATE TABLE progress (job_id INTEGER PRIMARY KEY REFERENCES jobs(job_id),
  log_inode INTEGER NOT NULL, log_device INTEGER NOT NULL, log_offset INTEGER NOT NULL,
  last_step INTEGER, last_step_time REAL, phase TEXT NOT NULL, median_interval REAL,
  p99_interval REAL, checkpoint_period INTEGER, longest_checkpoint_pause REAL,
  updated_at REAL NOT NULL);
INSERT INTO jobs (job_id, name, first_seen, last_seen) VALUES (5, 'old', 1, 2);
PRAGMA user_version = 1;)sql";
  ASSERT_EQ(sqlite3_exec(db, v1, nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(db);
  auto store = StateStore::Open(path);
  ASSERT_TRUE(store.ok()) << store.error().message;
  auto job = (*store)->GetJob(5).value();
  ASSERT_TRUE(job);
  EXPECT_EQ(job->name, "old");
  EXPECT_EQ(job->final_status, "");
  EXPECT_TRUE((*store)->AddWatch(9, 1).ok());
  store.value().reset();
  auto read_only = StateStore::OpenReadOnly(path);
  ASSERT_TRUE(read_only.ok()) << read_only.error().message;
  EXPECT_EQ((*read_only)->Watches().value(), std::vector<uint32_t>{9});
}

TEST(EventLog, LogfmtQuotesWhatNeedsIt) {
  EXPECT_EQ(
      RenderLogfmt("incident_opened",
                   {{"job", "7"}, {"summary", "no step for 8s"}, {"empty", ""}, {"q", "a\"b\nc"}}),
      "incident_opened job=7 summary=\"no step for 8s\" empty=\"\" q=\"a\\\"b\\nc\"");
}

}  // namespace
}  // namespace jobmon::monitor
