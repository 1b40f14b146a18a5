// The status view (cli/status_view.h): which source each field
// comes from, the daemon's stall threshold and expected step at `now`, and
// the two renderings of the same view.

#include "status_view.h"

#include <gtest/gtest.h>

namespace jobmon::cli {
namespace {

using nlohmann::json;

constexpr double kNow = 1'700'001'000;

monitor::JobRecord Record() {
  monitor::JobRecord r;
  r.job_id = 7;
  r.name = "llm";
  r.user = "alice";
  r.log_path = "/o/7/log";
  r.source = "manifest";
  r.slurm_state = "RUNNING";
  return r;
}

monitor::ProgressRecord Progress() {
  monitor::ProgressRecord p;
  p.job_id = 7;
  p.last_step = 100;
  p.last_step_time = kNow - 40;
  p.phase = "training";
  p.median_interval = 2.0;
  p.p99_interval = 3.0;
  p.updated_at = kNow - 5;
  return p;
}

monitor::IncidentRecord Incident(int64_t id, std::string state, double opened_at, int lines) {
  monitor::IncidentRecord i;
  i.id = id;
  i.job_id = 7;
  i.klass = state == "open" ? "nccl-timeout" : "hang";
  i.state = state;
  i.opened_at = opened_at;
  if (state == "closed") {
    i.closed_at = opened_at + 10;
    i.close_reason = "resumed";
  }
  i.summary = "summary " + std::to_string(id);
  for (int k = 0; k < lines; ++k) i.evidence.push_back("line " + std::to_string(k));
  i.hosts = {"n1"};
  return i;
}

StatusInputs DaemonInputs() {
  StatusInputs in;
  in.argument = "7";
  in.job_id = 7;
  in.now = kNow;
  in.db = "/var/lib/jobmon/state.db";
  in.record = Record();
  in.progress = Progress();
  in.log_path = "/o/7/log";
  return in;
}

TEST(StatusViewTest, TheDaemonsRecordGivesStateThresholdAndExpectedStep) {
  StatusInputs in = DaemonInputs();
  in.stall_rule.k = 5;
  in.stall_rule.min_stall_seconds = 60;
  const StatusView view = BuildStatusView(in);
  EXPECT_EQ(view.state, "training");
  EXPECT_EQ(view.db, in.db);
  EXPECT_EQ(view.slurm_state, "RUNNING");
  EXPECT_FALSE(view.klass);
  ASSERT_TRUE(view.progress.stall_threshold);
  EXPECT_DOUBLE_EQ(view.progress.stall_threshold->seconds, 60);  // 5 x 3 s < min_stall
  EXPECT_EQ(view.progress.expected_step_now, 120);               // 100 + 40 s / 2 s
  const json j = StatusJson(view);
  EXPECT_EQ(j["schema"], "jobmon.status/v1");
  EXPECT_EQ(j["source"], "daemon");
  EXPECT_EQ(j["tracked_as"], "manifest");
  EXPECT_DOUBLE_EQ(j["progress"]["seconds_since_last_step"].get<double>(), 40);
  EXPECT_EQ(j["progress"]["expected_step_now"], 120);
  EXPECT_EQ(j["progress"]["stall_threshold_seconds"], 60.0);
  EXPECT_TRUE(j["projection"].is_null());
  EXPECT_FALSE(j.contains("prometheus"));
  const std::string text = StatusText(view);
  EXPECT_NE(text.find("Job 7 (llm, alice): training (Slurm: RUNNING)\n"), std::string::npos)
      << text;
  EXPECT_NE(text.find("tracked via manifest"), std::string::npos) << text;
  EXPECT_NE(text.find("  last step: 100 at "), std::string::npos) << text;
  EXPECT_NE(text.find("  expected step now: 120\n"), std::string::npos) << text;
  EXPECT_NE(text.find("  stall threshold: "), std::string::npos) << text;
  EXPECT_NE(text.find("  Prometheus: none"), std::string::npos) << text;
}

// The job's name, its incident's summary and log lines are its user's text,
// printed to an admin's terminal: no escape sequence, BEL or CSI of theirs
// reaches it, and no newline of theirs forges a line.
TEST(StatusViewTest, NoTerminalControlOfAJobsUserReachesTheTerminal) {
  StatusInputs in = DaemonInputs();
  in.record->name = "llm\x1b]0;owned\x07";
  monitor::IncidentRecord open = Incident(3, "open", kNow - 100, 0);
  open.summary =
      "stalled\x9b"
      "2J";
  open.evidence = {"\x1b[8mhidden", "two\nlines"};
  in.incidents = {open};
  const std::string text = StatusText(BuildStatusView(in));
  for (const char* control : {"\x1b", "\x07", "\x9b"}) {
    EXPECT_EQ(text.find(control), std::string::npos) << text;
  }
  EXPECT_NE(text.find("Job 7 (llm\xef\xbf\xbd]0;owned\xef\xbf\xbd, alice)"), std::string::npos)
      << text;
  EXPECT_NE(text.find("      - two\xef\xbf\xbdlines\n"), std::string::npos) << text;
}

TEST(StatusViewTest, WhatIsFollowedIsNamedALearnedLineOrAPulseWithoutItsCount) {
  StatusInputs in = DaemonInputs();
  in.progress->profile = "learned: [trn] ep=# b=# of # | l=# | #s";
  StatusView view = BuildStatusView(in);
  EXPECT_EQ(StatusJson(view)["progress"]["followed_by"], "learned: [trn] ep=# b=# of # | l=# | #s");
  EXPECT_NE(StatusText(view).find("  followed by: learned: [trn] ep=# b=# of # | l=# | #s\n"),
            std::string::npos);
  in.progress->profile = "pulse:41: #-#-# #:#:# heartbeat: alive, rss=# MB";
  view = BuildStatusView(in);
  EXPECT_EQ(view.progress.followed_by, "pulse: #-#-# #:#:# heartbeat: alive, rss=# MB")
      << "the count a restart continues from is the daemon's, not the reader's";
}

TEST(StatusViewTest, AnOpenIncidentSetsStateClassAndStallTime) {
  StatusInputs in = DaemonInputs();
  in.incidents = {Incident(1, "closed", kNow - 900, 2), Incident(2, "open", kNow - 300, 12)};
  const StatusView view = BuildStatusView(in);
  EXPECT_EQ(view.state, "incident");
  EXPECT_EQ(view.klass, "nccl-timeout");
  EXPECT_EQ(view.stall_seconds, 300);
  const json j = StatusJson(view);
  ASSERT_EQ(j["incidents"].size(), 2u);
  EXPECT_EQ(j["incidents"][0]["close_reason"], "resumed");
  EXPECT_TRUE(j["incidents"][1]["closed_at"].is_null());
  EXPECT_EQ(j["incidents"][1]["evidence"].size(), 12u);  // JSON: every line
  EXPECT_EQ(j["incidents"][1]["hosts"][0], "n1");
  EXPECT_EQ(j["stall_seconds"], 300.0);
  const std::string text = StatusText(view);
  EXPECT_NE(text.find("  stalled/incident for "), std::string::npos) << text;
  EXPECT_NE(text.find(", closed "), std::string::npos) << text;
  EXPECT_NE(text.find("      - line 7\n"), std::string::npos) << text;
  EXPECT_EQ(text.find("      - line 8\n"), std::string::npos) << "text shows at most 8 lines";
}

// Recovery (monitor/recovery.h): the owner's choice, each step taken about
// an incident, and a hold, in the text and the JSON.
TEST(StatusViewTest, TheOwnersChoiceAndTheRecoveryStepsAreShown) {
  StatusInputs in = DaemonInputs();
  in.incidents = {Incident(2, "open", kNow - 300, 1)};
  in.recovery[2] = {{"signal", kNow - 200, "send SIGUSR1 to the job's steps"},
                    {"requeue", kNow - 100, "requeue the job without n3"}};
  in.manifest = monitor::ManifestView{};
  in.manifest->on_hang = OnHang::kRequeue;
  in.recovery_held = true;
  const StatusView view = BuildStatusView(in);
  const json j = StatusJson(view);
  EXPECT_EQ(j["on_hang"], "requeue");
  EXPECT_EQ(j["recovery_held"], true);
  ASSERT_EQ(j["incidents"][0]["recovery"].size(), 2u);
  EXPECT_EQ(j["incidents"][0]["recovery"][1]["detail"], "requeue the job without n3");
  const std::string text = StatusText(view);
  EXPECT_NE(text.find("  on a hang: requeue (the owner's --diag-on-hang); held"), std::string::npos)
      << text;
  EXPECT_NE(text.find("      recovery requeue at "), std::string::npos) << text;
  in.manifest->on_hang = OnHang::kNotify;
  EXPECT_EQ(StatusText(BuildStatusView(in)).find("on a hang"), std::string::npos)
      << "notify, the default, is not worth a line";
}

TEST(StatusViewTest, AnEndedJobHasNoThresholdNorExpectedStep) {
  StatusInputs in = DaemonInputs();
  in.record->ended_at = kNow - 60;
  in.record->final_status = "completed";
  in.record->final_class = "none";
  in.incidents = {Incident(2, "open", kNow - 300, 1)};  // ended wins over incident
  const StatusView view = BuildStatusView(in);
  EXPECT_EQ(view.state, "ended");
  EXPECT_FALSE(view.progress.stall_threshold);
  EXPECT_FALSE(view.progress.expected_step_now);
  const json j = StatusJson(view);
  EXPECT_FALSE(j["progress"].contains("stall_threshold_seconds"));
  EXPECT_FALSE(j["progress"].contains("expected_step_now"));
  EXPECT_NE(StatusText(view).find("  at job end: completed (none)\n"), std::string::npos);
}

TEST(StatusViewTest, TheEndOfJobDiagnosisIsShownLineByLine) {
  StatusInputs in = DaemonInputs();
  in.record->ended_at = kNow - 60;
  in.record->final_status = "failed";
  in.record->final_class = "python-exception";
  EXPECT_FALSE(BuildStatusView(in).diagnosis) << "none stored: none shown";
  EXPECT_FALSE(StatusJson(BuildStatusView(in)).contains("diagnosis"));
  in.record->diagnosis = "hardware: pcie-fatal\nnetwork: healthy\n";
  const StatusView view = BuildStatusView(in);
  EXPECT_EQ(StatusJson(view)["diagnosis"], "hardware: pcie-fatal\nnetwork: healthy\n");
  EXPECT_NE(StatusText(view).find("  diagnosis:\n    hardware: pcie-fatal\n    network: healthy\n"),
            std::string::npos)
      << StatusText(view);
}

TEST(StatusViewTest, SlurmsStateWinsOverTheDaemonsLastOne) {
  StatusInputs in = DaemonInputs();
  slurm::SlurmJob slurm;
  slurm.job_id = 7;
  slurm.name = "from-slurm";
  slurm.user = "bob";
  slurm.state = "FAILED";
  slurm.exit_code = "1:0";
  in.slurm = slurm;
  const StatusView view = BuildStatusView(in);
  EXPECT_EQ(view.slurm_state, "FAILED");
  EXPECT_EQ(view.slurm_exit_code, "1:0");
  EXPECT_EQ(view.name, "llm");  // the daemon's record names the job
  in.record.reset();
  in.progress.reset();
  const StatusView slurm_only = BuildStatusView(in);
  EXPECT_EQ(slurm_only.name, "from-slurm");
  EXPECT_EQ(slurm_only.state, "unknown");  // no record, no log projection
  const json j = StatusJson(slurm_only);
  EXPECT_EQ(j["source"], "log");
  EXPECT_FALSE(j.contains("db"));
  EXPECT_FALSE(j.contains("tracked_as"));
  EXPECT_EQ(j["progress"], json::object());
  EXPECT_NE(StatusText(slurm_only).find("  no step yet\n"), std::string::npos);
}

TEST(StatusViewTest, ASlurmOutageIsNotedNotTakenForAnEnd) {
  StatusInputs in = DaemonInputs();
  EXPECT_EQ(StatusText(BuildStatusView(in)).find("has not answered"), std::string::npos);
  EXPECT_TRUE(StatusJson(BuildStatusView(in))["slurm_unreachable_since"].is_null());
  in.slurm_unreachable_since = kNow - 90;
  const StatusView view = BuildStatusView(in);
  EXPECT_NE(StatusText(view).find("note: Slurm has not answered the monitor since"),
            std::string::npos)
      << StatusText(view);
  EXPECT_EQ(StatusJson(view)["slurm_unreachable_since"], kNow - 90);
  EXPECT_NE(view.state, "ended");
}

TEST(StatusViewTest, ALogAloneShowsItsProjection) {
  StatusInputs in;
  in.argument = "/tmp/x.log";
  in.now = kNow;
  in.log_path = "/tmp/x.log";
  triage::TriageReport report;
  report.status = triage::JobStatus::kRunning;
  report.primary = "none";
  report.progress.last_step = 42;
  report.progress.expected_step_now = 50;
  in.report = report;
  const StatusView view = BuildStatusView(in);
  EXPECT_EQ(view.title, "/tmp/x.log");
  EXPECT_EQ(view.state, triage::ToString(triage::JobStatus::kRunning));
  EXPECT_EQ(view.klass, "none");
  const json j = StatusJson(view);
  EXPECT_TRUE(j["job_id"].is_null());
  EXPECT_EQ(j["progress"]["last_step"], 42);
  EXPECT_TRUE(j["progress"]["last_step_time"].is_null());
  EXPECT_EQ(j["progress"]["expected_step_now"], 50);
  EXPECT_FALSE(j["progress"].contains("updated_at"));
  EXPECT_TRUE(j["projection"].is_object());
  const std::string text = StatusText(view);
  EXPECT_EQ(text.rfind("Job /tmp/x.log: ", 0), 0u) << text;
  EXPECT_NE(text.find("the log alone (no daemon record)"), std::string::npos) << text;
  EXPECT_NE(text.find("  last step: 42\n"), std::string::npos) << text;
  EXPECT_NE(text.find("\nProgress projection\n"), std::string::npos) << text;
}

TEST(StatusViewTest, TheManifestGivesPrometheusTunnelAndArchive) {
  StatusInputs in = DaemonInputs();
  in.diag_dir = "/o/7/diag";
  monitor::ManifestView m;
  m.head_node = "n1";
  m.url = "http://127.0.0.1:19090";
  m.tunnel_command = "ssh -N -L 19090:127.0.0.1:19090 n1";
  m.state = "running";
  in.manifest = m;
  const json without_archive = StatusJson(BuildStatusView(in));
  EXPECT_TRUE(without_archive["archive"].is_null());
  EXPECT_EQ(without_archive["diag_dir"], "/o/7/diag");
  EXPECT_EQ(without_archive["prometheus"]["head_node"], "n1");
  in.manifest->archive_path = "/o/7/diag/tsdb.tar.zst";
  const StatusView view = BuildStatusView(in);
  EXPECT_EQ(StatusJson(view)["archive"], "/o/7/diag/tsdb.tar.zst");
  const std::string text = StatusText(view);
  EXPECT_NE(text.find("  Prometheus: http://127.0.0.1:19090 on n1 (running)\n"), std::string::npos)
      << text;
  EXPECT_NE(text.find("  tunnel: ssh -N -L 19090:127.0.0.1:19090 n1\n"), std::string::npos);
  EXPECT_NE(text.find("  archive: /o/7/diag/tsdb.tar.zst\n"), std::string::npos);
  EXPECT_TRUE(StatusJson(view)["prometheus"]["tsdb_dir"].is_null());
  EXPECT_EQ(text.find("live TSDB"), std::string::npos) << "no line without a tsdb_dir";
}

TEST(StatusViewTest, TheLiveTsdbOnTheHeadNodesDiskIsNamed) {
  StatusInputs in = DaemonInputs();
  in.diag_dir = "/o/7/diag";
  monitor::ManifestView m;
  m.head_node = "n1";
  m.url = "http://127.0.0.1:19090";
  m.tunnel_command = "ssh -N -L 19090:127.0.0.1:19090 n1";
  m.state = "running";
  m.tsdb_dir = "/var/lib/jobmon/tsdb/n1/7";
  in.manifest = m;
  const StatusView view = BuildStatusView(in);
  EXPECT_EQ(StatusJson(view)["prometheus"]["tsdb_dir"], "/var/lib/jobmon/tsdb/n1/7");
  EXPECT_NE(StatusText(view).find("  live TSDB: /var/lib/jobmon/tsdb/n1/7 on n1\n"),
            std::string::npos)
      << StatusText(view);
}

}  // namespace
}  // namespace jobmon::cli
