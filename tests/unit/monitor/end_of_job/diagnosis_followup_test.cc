// The monitor's end-of-job diagnosis, through the daemon core with a fake
// diagnoser: the end-of-job alert goes out first and is never held back;
// the diagnosis waits for the manifest to say "archived", then follows up
// the incident the job ended with (annotation `diagnosis`, the report as
// the document) and is stored for `jobmon status`; a slow one is abandoned
// at the timeout and told to stop.

#include "jobmon/monitor/diagnosis_followup.h"

#include <gtest/gtest.h>

#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <thread>

#include "daemon_test_fakes.h"
#include "jobmon/monitor/monitor.h"

namespace jobmon::monitor {
namespace {

using diagnose::TargetOutcome;
using diagnose::TargetRequest;
using test_support::RecordingLog;
using test_support::RecordingNotifier;
using test_support::ScriptedSource;
using namespace std::chrono_literals;
namespace fs = std::filesystem;

TEST(CheckArchiveState, OnlyArchivedIsReadyArchiveFailedAndEndedNeverWillBe) {
  using R = ArchiveCheck::Readiness;
  EXPECT_EQ(CheckArchiveState("archived").readiness, R::kReady);
  for (const char* later : {"", "starting", "running", "stopping", "archiving"}) {
    EXPECT_EQ(CheckArchiveState(later).readiness, R::kWait) << later;
  }
  EXPECT_EQ(CheckArchiveState("archive_failed").readiness, R::kNone);
  EXPECT_NE(CheckArchiveState("archive_failed").why.find("failed"), std::string::npos);
  EXPECT_EQ(CheckArchiveState("ended").readiness, R::kNone);
}

// A diagnosis held until the test releases it (or its cancel flag is set).
struct Gate {
  std::mutex mu;
  std::condition_variable cv;
  bool go = false;
  std::atomic<int> calls{0};
  std::atomic<bool> saw_cancel{false};
  std::string argument;  // written before `calls` is incremented
  bool cleanup_on_signal = true;

  diagnose::TargetDiagnoser Fake() {
    return [this](const TargetRequest& r) {
      {
        std::lock_guard lock(mu);
        argument = r.argument;
        cleanup_on_signal = r.cleanup_on_signal;
      }
      ++calls;
      std::unique_lock lock(mu);
      while (!go && !(r.cancel && r.cancel->load())) cv.wait_for(lock, 2ms);
      TargetOutcome out;
      if (!go) {
        saw_cancel = true;
        out.status = TargetOutcome::Status::kCancelled;
        out.error = "abandoned (timeout)";
        return out;
      }
      out.diagnosis.context.job = "7";
      diagnose::PlaybookResult p;
      p.playbook = "hardware";
      p.analysis_type = "hardware";
      p.verdict = "pcie-fatal";
      out.diagnosis.playbooks.push_back(p);
      return out;
    };
  }
  void Release() {
    std::lock_guard lock(mu);
    go = true;
    cv.notify_all();
  }
  std::string Argument() {
    std::lock_guard lock(mu);
    return argument;
  }
};

class TempDir {
 public:
  TempDir() {
    char pattern[] = "/tmp/jobmon-followup-test-XXXXXX";
    path_ = mkdtemp(pattern);
  }
  ~TempDir() { fs::remove_all(path_); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

class DiagnosisFollowUpTest : public ::testing::Test {
 protected:
  void SetUp() override {
    log_path = dir.path() + "/run-7.out";
    diag_dir = dir.path() + "/jobmon-diag-7";
    fs::create_directories(diag_dir);
    Manifest("running");
    std::ofstream(log_path) << "0: starting\n";
    config.state_db = dir.path() + "/state.db";
    config.slurm_poll_interval = 1;
    config.stall.min_stall_seconds = 30;
    config.diagnose_timeout = 30;
    source.jobs = {Job("RUNNING")};
  }
  void Start() {
    store = std::move(StateStore::Open(config.state_db).value());
    monitor = std::make_unique<Monitor>(config, *store, source, notifier, log, gate.Fake());
    ASSERT_TRUE(monitor->Restore(now).ok());
  }
  void TearDown() override {
    gate.Release();  // a held diagnosis lets the monitor's destructor join it
    monitor.reset();
  }
  slurm::SlurmJob Job(const std::string& state) {
    slurm::SlurmJob j;
    j.job_id = 7;
    j.name = "llama";
    j.user = "alice";
    j.uid = getuid();
    j.gid = getgid();
    j.state = state;
    j.partition = "gpu";
    j.std_out = log_path;
    j.node_list = "node1";
    return j;
  }
  void Manifest(const std::string& state) {
    std::ofstream(diag_dir + "/manifest.json", std::ios::trunc)
        << R"({"schema": "jobmon.manifest/v1", "state": ")" << state << R"("})";
  }
  void Train(int steps) {
    for (int s = 0; s < steps; ++s) {
      std::ofstream(log_path, std::ios::app)
          << "0: completed step: " << s << ", seconds: 1.000, loss: 2.0\n";
      monitor->Cycle(now += 1);
    }
  }
  // The job fails with a traceback: its end-of-job alert opens (and closes).
  void Fail() {
    std::ofstream(log_path, std::ios::app)
        << "0: Traceback (most recent call last):\n0: ValueError: bad batch\n";
    source.jobs = {Job("FAILED")};
    monitor->Cycle(now += 1);
  }
  // Cycles (one second each) until `done`, with real time for the thread.
  template <class Done>
  bool CycleUntil(Done done, int cycles = 500) {
    for (int i = 0; i < cycles && !done(); ++i) {
      std::this_thread::sleep_for(2ms);
      monitor->Cycle(now += 0.01);
    }
    return done();
  }
  size_t Count(const std::string& text) const {
    size_t n = 0;
    for (const auto& l : log.lines) n += l.find(text) != std::string::npos;
    return n;
  }
  std::string StoredDiagnosis() { return store->GetJob(7).value()->diagnosis; }

  TempDir dir;
  std::string log_path, diag_dir;
  MonitorConfig config;
  ScriptedSource source;
  RecordingNotifier notifier;
  RecordingLog log;
  Gate gate;
  std::unique_ptr<StateStore> store;
  std::unique_ptr<Monitor> monitor;
  double now = 1'000'000;
};

TEST_F(DiagnosisFollowUpTest, TheAlertGoesFirstTheDiagnosisFollowsItsIncidentAndIsStored) {
  Start();
  Train(20);
  ASSERT_EQ(store->GetJob(7).value()->diag_dir, diag_dir) << "a --diag job";
  Fail();
  ASSERT_EQ(notifier.sent.size(), 1u) << "the end-of-job alert is not held back";
  const alerts::Alert ended = notifier.sent[0];
  EXPECT_EQ(ended.klass, "ended/python-exception");
  EXPECT_TRUE(ended.diagnosis.empty());
  // The archiver has not finished: nothing is diagnosed yet.
  for (int i = 0; i < 5; ++i) monitor->Cycle(now += 1);
  EXPECT_EQ(gate.calls, 0);
  EXPECT_EQ(monitor->stats().diagnoses_pending, 1u);
  Manifest("archived");
  ASSERT_TRUE(CycleUntil([&] { return gate.calls > 0; }));
  EXPECT_EQ(gate.Argument(), diag_dir);
  EXPECT_FALSE(gate.cleanup_on_signal) << "the daemon's own SIGTERM handling stays";
  for (int i = 0; i < 5; ++i) monitor->Cycle(now += 1);
  EXPECT_EQ(notifier.sent.size(), 1u) << "nothing until the diagnosis is done";
  EXPECT_EQ(StoredDiagnosis(), "");
  gate.Release();
  ASSERT_TRUE(CycleUntil([&] { return notifier.sent.size() > 1; }));
  ASSERT_EQ(notifier.sent.size(), 2u);
  const alerts::Alert& follow_up = notifier.sent[1];
  EXPECT_EQ(follow_up.key, ended.key) << "the same incident";
  EXPECT_EQ(follow_up.incident_id, ended.incident_id);
  EXPECT_EQ(follow_up.status, "resolved") << "the incident closed at job end";
  EXPECT_EQ(follow_up.diagnosis, "hardware: pcie-fatal\n");
  EXPECT_NE(follow_up.diagnosis_report.find("## TSDB Diagnosis: 7"), std::string::npos)
      << follow_up.diagnosis_report;
  EXPECT_TRUE(follow_up.report.empty()) << "the triage report went with the alert";
  EXPECT_NE(alerts::ToJson(follow_up)["diagnosis"].get<std::string>().find("pcie-fatal"),
            std::string::npos)
      << "what the webhook gets";
  EXPECT_EQ(StoredDiagnosis(), "hardware: pcie-fatal\n");
  EXPECT_TRUE(log.Has("job_diagnosed job=7"));
  EXPECT_EQ(monitor->stats().diagnoses_pending, 0u);
}

// The daemon is killed after the job ended, before its archive was ready:
// the restarted daemon finds the diagnosis pending in the database and
// follows the same incident with it.
TEST_F(DiagnosisFollowUpTest, APendingDiagnosisIsResumedAfterARestart) {
  Start();
  Train(20);
  Fail();
  ASSERT_EQ(notifier.sent.size(), 1u);
  const alerts::Alert ended = notifier.sent[0];
  EXPECT_EQ(monitor->stats().diagnoses_pending, 1u);
  monitor.reset();  // killed: nothing but the database survives
  store.reset();
  Start();
  monitor->Cycle(now += 1);
  EXPECT_TRUE(log.Has("diagnosis_resumed job=7")) << "queued again from the database";
  EXPECT_EQ(monitor->stats().diagnoses_pending, 1u);
  Manifest("archived");
  gate.Release();
  ASSERT_TRUE(CycleUntil([&] { return notifier.sent.size() > 1; }));
  EXPECT_EQ(notifier.sent[1].key, ended.key);
  EXPECT_EQ(notifier.sent[1].incident_id, ended.incident_id) << "the incident the job ended with";
  EXPECT_EQ(notifier.sent[1].diagnosis, "hardware: pcie-fatal\n");
  EXPECT_EQ(StoredDiagnosis(), "hardware: pcie-fatal\n");
  // Diagnosed now: a further restart resumes nothing.
  monitor.reset();
  store.reset();
  log.lines.clear();
  Start();
  EXPECT_FALSE(log.Has("diagnosis_resumed"));
}

TEST_F(DiagnosisFollowUpTest, ACleanEndIsDiagnosedAndStoredAndNothingIsSent) {
  Manifest("archived");
  Start();
  Train(20);
  std::ofstream(log_path, std::ios::app) << "0: training finished\n";
  source.jobs = {Job("COMPLETED")};
  monitor->Cycle(now += 1);
  ASSERT_TRUE(store->GetJob(7).value()->ended_at);
  gate.Release();
  ASSERT_TRUE(CycleUntil([&] { return !StoredDiagnosis().empty(); }));
  EXPECT_EQ(StoredDiagnosis(), "hardware: pcie-fatal\n");
  EXPECT_TRUE(notifier.sent.empty()) << "no incident: nothing to follow up";
}

TEST_F(DiagnosisFollowUpTest, ASlowDiagnosisIsAbandonedAtTheTimeoutAndCancelled) {
  Manifest("archived");
  Start();
  Train(20);
  Fail();
  ASSERT_TRUE(CycleUntil([&] { return gate.calls > 0; }));
  monitor->Cycle(now += 29);
  EXPECT_FALSE(gate.saw_cancel) << "within the timeout";
  monitor->Cycle(now += 2);
  for (int i = 0; i < 1000 && !gate.saw_cancel; ++i) std::this_thread::sleep_for(2ms);
  EXPECT_TRUE(gate.saw_cancel) << "the late diagnosis is told to stop";
  EXPECT_EQ(StoredDiagnosis(), "diagnosis timed out after 30s");
  EXPECT_EQ(notifier.sent.size(), 1u) << "only the end-of-job alert";
  EXPECT_EQ(Count("diagnosis_timed_out job=7"), 1u);
  for (int i = 0; i < 5; ++i) monitor->Cycle(now += 1);
  EXPECT_EQ(notifier.sent.size(), 1u) << "the abandoned outcome is never sent";
}

TEST_F(DiagnosisFollowUpTest, OffSubmitsNothing) {
  config.diagnose_at_end = false;
  Manifest("archived");
  Start();
  Train(20);
  Fail();
  for (int i = 0; i < 20; ++i) monitor->Cycle(now += 1);
  EXPECT_EQ(gate.calls, 0);
  EXPECT_EQ(monitor->stats().diagnoses_pending, 0u);
  EXPECT_EQ(StoredDiagnosis(), "");
  EXPECT_EQ(notifier.sent.size(), 1u);
}

TEST_F(DiagnosisFollowUpTest, AFailedArchiveMeansNoDiagnosisAndSaysWhy) {
  Manifest("archive_failed");
  Start();
  Train(20);
  Fail();
  monitor->Cycle(now += 1);
  EXPECT_EQ(gate.calls, 0);
  EXPECT_EQ(StoredDiagnosis(), "no diagnosis: the TSDB archive failed");
  EXPECT_TRUE(log.Has("diagnosis_skipped job=7"));
}

TEST_F(DiagnosisFollowUpTest, AnArchiveThatNeverComesTimesOut) {
  Manifest("archiving");
  Start();
  Train(20);
  Fail();
  monitor->Cycle(now += 29);
  EXPECT_EQ(StoredDiagnosis(), "") << "still waiting";
  monitor->Cycle(now += 2);
  EXPECT_EQ(gate.calls, 0);
  EXPECT_NE(StoredDiagnosis().find("diagnosis timed out after 30s waiting for the TSDB archive"),
            std::string::npos)
      << StoredDiagnosis();
  EXPECT_NE(StoredDiagnosis().find("archiving"), std::string::npos) << StoredDiagnosis();
}

}  // namespace
}  // namespace jobmon::monitor
