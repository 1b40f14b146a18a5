// The monitor's progress side: following logs restart-safely, the stall
// state machine, the exposition parser, the stall classifier.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "jobmon/monitor/exposition.h"
#include "jobmon/monitor/job_progress.h"
#include "jobmon/monitor/log_follower.h"
#include "jobmon/monitor/metric_window.h"
#include "jobmon/monitor/progress_tracker.h"
#include "jobmon/monitor/stall_classifier.h"
#include "jobmon/monitor/state_store.h"
#include "jobmon/triage/slurm_jobs.h"

namespace jobmon::monitor {
namespace {

using triage::ExpandStdoutPattern;
using triage::IsTerminalState;
using triage::ParseSqueueJson;
using triage::SlurmJob;

namespace fs = std::filesystem;

struct TempDir {
  fs::path path;
  TempDir()
      : path(fs::temp_directory_path() /
             ("jobmon-progress-" + std::to_string(getpid()) + "-" +
              std::to_string(std::chrono::steady_clock::now().time_since_epoch().count()))) {
    fs::create_directories(path);
  }
  ~TempDir() { fs::remove_all(path); }
};

void Append(const fs::path& path, const std::string& text) {
  std::ofstream(path, std::ios::app | std::ios::binary) << text;
}

// ---- LogFollower ----

TEST(LogFollowerTest, ReturnsCompleteLinesOnceAndWaitsForPartialOnes) {
  TempDir dir;
  fs::path log = dir.path / "job.log";
  LogFollower follower(log.string());
  auto missing = follower.Poll();
  ASSERT_TRUE(missing.ok());
  EXPECT_TRUE(missing->missing);
  Append(log, "0: completed step: 0\r\n0: completed step: 1\n0: compl");
  auto first = follower.Poll().value();
  EXPECT_EQ(first.lines,
            (std::vector<std::string>{"0: completed step: 0", "0: completed step: 1"}));
  EXPECT_TRUE(follower.Poll()->lines.empty()) << "the partial line waits";
  Append(log, "eted step: 2\n");
  EXPECT_EQ(follower.Poll()->lines, std::vector<std::string>{"0: completed step: 2"});
}

TEST(LogFollowerTest, ResumesFromAPersistedPositionWithoutRereadingOrLosing) {
  TempDir dir;
  fs::path log = dir.path / "job.log";
  Append(log, "a\nb\n");
  LogFollower before(log.string());
  ASSERT_EQ(before.Poll()->lines.size(), 2u);
  LogPosition saved = before.position();  // what the daemon stores in SQLite
  Append(log, "c\n");                     // written while the daemon was down
  LogFollower after(log.string(), saved);
  EXPECT_EQ(after.Poll()->lines, std::vector<std::string>{"c"});
}

TEST(LogFollowerTest, TruncationAndRotationRestartAtZero) {
  TempDir dir;
  fs::path log = dir.path / "job.log";
  Append(log, "one\ntwo\nthree\n");
  LogFollower follower(log.string());
  ASSERT_EQ(follower.Poll()->lines.size(), 3u);
  fs::resize_file(log, 0);  // copytruncate
  Append(log, "new\n");
  auto truncated = follower.Poll().value();
  EXPECT_TRUE(truncated.truncated);
  EXPECT_EQ(truncated.lines, std::vector<std::string>{"new"});
  fs::rename(log, dir.path / "job.log.1");  // rotation
  Append(log, "rotated\n");
  auto rotated = follower.Poll().value();
  EXPECT_TRUE(rotated.rotated);
  EXPECT_EQ(rotated.lines, std::vector<std::string>{"rotated"});
}

TEST(LogFollowerTest, BoundedPerPollAndARunawayLineIsCut) {
  TempDir dir;
  fs::path log = dir.path / "job.log";
  std::string many;
  for (int i = 0; i < 1000; ++i) many += "line " + std::to_string(i) + "\n";
  Append(log, many);
  LogFollower follower(log.string(), {}, 1000);
  size_t total = 0, polls = 0;
  for (; polls < 100; ++polls) {
    auto chunk = follower.Poll().value();
    if (chunk.lines.empty()) break;
    EXPECT_LE(chunk.lines.size(), 200u);
    total += chunk.lines.size();
  }
  EXPECT_EQ(total, 1000u);
  EXPECT_GT(polls, 5u);
  Append(log, std::string(LogFollower::kMaxLine + 10, 'x'));
  LogFollower big(log.string(), follower.position(), 8 << 20);
  auto chunk = big.Poll().value();
  ASSERT_EQ(chunk.lines.size(), 1u);
  EXPECT_EQ(chunk.lines[0].size(), LogFollower::kMaxLine);
}

// ---- ProgressTracker ----

StallPolicy Policy() {
  StallPolicy p;
  p.k = 5;
  p.min_stall_seconds = 10;
  p.startup_grace_seconds = 120;
  p.checkpoint_grace_factor = 1.5;
  p.first_checkpoint_grace_seconds = 60;
  return p;
}

TEST(ProgressTrackerTest, StartupGraceThenTrainingThenStalledAfterTheThreshold) {
  ProgressTracker t(Policy(), 1000);
  EXPECT_EQ(t.Evaluate(1100).phase, Phase::kStarting) << "compiling: within the startup grace";
  EXPECT_EQ(t.Evaluate(1121).phase, Phase::kStalled) << "no first step after the grace";
  double now = 1100;
  for (int step = 0; step < 30; ++step, now += 1.0) t.OnStep(step, now);
  ProgressState s = t.Evaluate(now);
  EXPECT_EQ(s.phase, Phase::kTraining);
  EXPECT_EQ(*s.last_step, 29);
  EXPECT_NEAR(*s.p99_interval, 1.0, 1e-9);
  EXPECT_DOUBLE_EQ(s.threshold_seconds, 10) << "5 x 1 s < min_stall 10 s";
  EXPECT_EQ(t.Evaluate(now - 1 + 10).phase, Phase::kTraining);
  ProgressState stalled = t.Evaluate(now - 1 + 10.5);
  EXPECT_EQ(stalled.phase, Phase::kStalled);
  EXPECT_EQ(*stalled.expected_step_now, 29 + 10);
}

TEST(ProgressTrackerTest, SlowStepsRaiseTheThresholdAboveMinStall) {
  ProgressTracker t(Policy(), 0);
  double now = 0;
  for (int step = 0; step < 20; ++step, now += 4.0) t.OnStep(step, now);
  ProgressState s = t.Evaluate(now);
  EXPECT_DOUBLE_EQ(s.threshold_seconds, 20) << "5 x p99 4 s";
  EXPECT_EQ(t.Evaluate(now - 4 + 19).phase, Phase::kTraining);
  EXPECT_EQ(t.Evaluate(now - 4 + 21).phase, Phase::kStalled);
}

TEST(ProgressTrackerTest, CheckpointPausesAreLearnedAndGetGraceNotAnAlarm) {
  ProgressTracker t(Policy(), 0);
  t.SetCheckpointPeriod(10);
  double now = 0;
  // 1 s steps; after each checkpoint step (10, 20) a 25 s pause.
  for (int step = 0; step <= 30; ++step) {
    t.OnStep(step, now);
    now += (step > 0 && step % 10 == 0) ? 25.0 : 1.0;
  }
  EXPECT_DOUBLE_EQ(*t.longest_checkpoint_pause(), 25);
  EXPECT_NEAR(*t.Evaluate(now).p99_interval, 1.0, 1e-9) << "pauses stay out of the p99";
  // Now sitting on checkpoint step 30: grace 1.5 x 25 s.
  ProgressState s = t.Evaluate(now - 25 + 30);
  EXPECT_TRUE(s.checkpoint_grace);
  EXPECT_DOUBLE_EQ(s.threshold_seconds, 37.5);
  EXPECT_EQ(s.phase, Phase::kTraining);
  EXPECT_EQ(t.Evaluate(now - 25 + 38).phase, Phase::kStalled);
}

TEST(ProgressTrackerTest, RepeatedStepsFromOtherTasksDoNotCountAsProgress) {
  ProgressTracker t(Policy(), 0);
  double now = 0;
  for (int step = 0; step < 20; ++step, now += 1) t.OnStep(step, now);
  t.OnStep(19, now + 30);  // task 1 printing step 19 late
  EXPECT_EQ(*t.Evaluate(now + 31).last_step_time, now - 1);
  EXPECT_EQ(t.Evaluate(now + 31).phase, Phase::kStalled);
}

// ---- Exposition ----

TEST(ExpositionTest, ParsesOurExportersGoldenScrape) {
  std::ifstream in(std::string(JOBMON_FIXTURES) + "/exporter/basic.prom");
  std::stringstream text;
  text << in.rdbuf();
  Exposition e = ParseExposition(text.str());
  EXPECT_EQ(e.bad_lines, 0u);
  size_t series_lines = 0;
  std::istringstream lines(text.str());
  for (std::string line; std::getline(lines, line);)
    series_lines += !line.empty() && line[0] != '#';
  EXPECT_EQ(e.samples.size(), series_lines);
  bool found = false;
  for (const Sample& s : e.samples) {
    if (s.name == "hw_gpu_power_watts" && s.labels.at("gpu") == "2") {
      EXPECT_DOUBLE_EQ(s.value, 712);
      EXPECT_EQ(s.labels.at("host"), "node7");
      found = true;
    }
  }
  EXPECT_TRUE(found);
}

TEST(ExpositionTest, EscapesSpecialValuesAndHostileLines) {
  Exposition e = ParseExposition(
      "# HELP x y\n"
      "a{l=\"q\\\"uote\\\\n\",m=\"\"} 1.5 1700000000000\n"
      "b NaN\n"
      "c{} +Inf\n"
      "d{l=\"unterminated} 1\n"
      "{l=\"x\"} 1\n"
      "e 12abc\n"
      "f\n"
      "g{l=x} 1\n");
  ASSERT_EQ(e.samples.size(), 3u);
  EXPECT_EQ(e.samples[0].labels.at("l"), "q\"uote\\n");
  EXPECT_EQ(e.samples[0].labels.at("m"), "");
  EXPECT_DOUBLE_EQ(e.samples[0].value, 1.5);
  EXPECT_TRUE(std::isnan(e.samples[1].value));
  EXPECT_TRUE(std::isinf(e.samples[2].value));
  EXPECT_EQ(e.bad_lines, 5u);
}

// ---- ClassifyStall ----

HostEvidence Host(std::string name, double util, double watts, double baseline = 700) {
  HostEvidence h;
  h.host = std::move(name);
  h.gpu_utilization = std::vector<double>(8, util);
  h.gpu_power = std::vector<double>(8, watts);
  h.baseline_power = baseline;
  return h;
}

TEST(ClassifyStallTest, PlaybookOneInterpretationTable) {
  auto busy = ClassifyStall({{Host("node1", 100, 300), Host("node2", 100, 290)}});
  EXPECT_EQ(busy.klass, "hang/busy-wait");
  ASSERT_EQ(busy.evidence.size(), 2u);
  EXPECT_EQ(busy.evidence[0],
            "node1: GPU util 100%, power 300 W (43% of its training baseline 700 W)");

  HostEvidence gone = Host("node2", 0, 0);
  gone.exporter_up = false;
  auto death = ClassifyStall({{Host("node1", 100, 300), gone}});
  EXPECT_EQ(death.klass, "hang/node-death");
  EXPECT_EQ(death.hosts, std::vector<std::string>{"node2"});
  EXPECT_EQ(death.evidence[1], "node2: exporter down");

  auto zero = ClassifyStall({{Host("node1", 100, 300), Host("node2", 0, 0)}});
  EXPECT_EQ(zero.klass, "hang/node-death") << "0 W is a dead node too";

  HostEvidence stale = Host("node2", 100, 300);
  stale.seconds_since_seen = 45;
  EXPECT_EQ(ClassifyStall({{Host("node1", 100, 300), stale}, 30}).klass, "hang/node-death");

  auto slow = ClassifyStall({{Host("node1", 100, 690), Host("node2", 98, 650)}});
  EXPECT_EQ(slow.klass, "slow-not-hung");

  auto straggler = ClassifyStall({{Host("node1", 100, 300), Host("node2", 100, 680)}});
  EXPECT_EQ(straggler.klass, "hang/straggler");
  EXPECT_EQ(straggler.hosts, std::vector<std::string>{"node2"});

  HostEvidence network = Host("node1", 100, 300);
  network.tcp_retransmit_rate = 250;
  network.tcp_retransmit_baseline = 2;
  auto net = ClassifyStall({{network, Host("node2", 100, 300)}});
  EXPECT_EQ(net.klass, "hang/busy-wait");
  EXPECT_NE(net.evidence[0].find("TCP retransmits 250.0/s before the stall"), std::string::npos);

  HostEvidence no_baseline = Host("node1", 100, 300);
  no_baseline.baseline_power.reset();
  EXPECT_EQ(ClassifyStall({{no_baseline}}).klass, "hang") << "no baseline: no guess";
}

// ---- MetricWindow ----

// What an exporter serves for a host with 2 GPUs.
Exposition Scrape(double util, double watts, double retransmits, double step) {
  std::string text;
  for (int gpu = 0; gpu < 2; ++gpu) {
    text += "hw_gpu_utilization_percent{gpu=\"" + std::to_string(gpu) + "\",host=\"h\"} " +
            std::to_string(util) + "\n";
    text += "hw_gpu_power_watts{gpu=\"" + std::to_string(gpu) + "\",host=\"h\"} " +
            std::to_string(watts) + "\n";
  }
  text += "hw_tcp_retransmits_total{host=\"h\"} " + std::to_string(retransmits) + "\n";
  text += "tb_step{host=\"h\"} " + std::to_string(step) + "\n";
  text += "hw_net_rx_bytes_total{device=\"eth0\",host=\"h\"} 1\n";  // not kept
  return ParseExposition(text);
}

TEST(MetricWindowTest, BusyWaitAgainstTheJobsOwnBaselineNotTheCompilePhase) {
  MetricWindow window;
  double t = 0;
  for (; t < 30; t += 5) {  // compiling: idle power
    window.AddScrape("node1", t, Scrape(0, 90, 10, 0));
    window.AddScrape("node2", t, Scrape(0, 95, 10, 0));
  }
  for (; t < 300; t += 5) {  // training
    window.AddScrape("node1", t, Scrape(97, 700, 10 + t / 100, t));
    window.AddScrape("node2", t, Scrape(96, 680, 10 + t / 100, t));
  }
  for (; t < 400; t += 5) {  // stuck in a collective
    window.AddScrape("node1", t, Scrape(100, 280, 13, 299));
    window.AddScrape("node2", t, Scrape(100, 270, 13, 299));
  }
  StallEvidence evidence = window.Evidence(t, 30, 299, 30);
  ASSERT_EQ(evidence.hosts.size(), 2u);
  EXPECT_DOUBLE_EQ(*evidence.hosts[0].baseline_power, 700);
  EXPECT_EQ(evidence.hosts[0].gpu_power, (std::vector<double>{280, 280}));
  StallClassification c = ClassifyStall(evidence);
  EXPECT_EQ(c.klass, "hang/busy-wait") << c.summary;
  EXPECT_EQ(window.series_count(), 2u * (2 + 2 + 2));  // util+power per GPU, retx, tb_step
}

TEST(MetricWindowTest, TooFewTrainingScrapesGiveNoBaselineRatherThanAWrongOne) {
  MetricWindow window;
  double t = 0;
  for (; t < 6; t += 2) window.AddScrape("node1", t, Scrape(97, 700, 0, t));  // 3 scrapes
  for (; t < 30; t += 2) window.AddScrape("node1", t, Scrape(100, 300, 0, 5));
  StallEvidence evidence = window.Evidence(t, 0, 5, 30);
  EXPECT_FALSE(evidence.hosts[0].baseline_power);
  EXPECT_EQ(ClassifyStall(evidence).klass, "hang") << "no pattern claimed without a baseline";
  for (; t < 40; t += 2) window.AddScrape("node1", t, Scrape(97, 700, 0, t));
  EXPECT_TRUE(window.Evidence(t, 0, 39, 30).hosts[0].baseline_power) << "enough scrapes now";
}

TEST(MetricWindowTest, AHostThatStopsAnsweringIsNamedAsDead) {
  MetricWindow window;
  double t = 0;
  for (; t < 200; t += 5) {
    window.AddScrape("node1", t, Scrape(97, 700, 0, t));
    window.AddScrape("node2", t, Scrape(97, 700, 0, t));
  }
  for (; t < 260; t += 5) {
    window.AddScrape("node1", t, Scrape(100, 280, 0, 199));
    window.AddFailedScrape("node2", t);
  }
  StallClassification c = ClassifyStall(window.Evidence(t, 0, 199, 30));
  EXPECT_EQ(c.klass, "hang/node-death");
  EXPECT_EQ(c.hosts, std::vector<std::string>{"node2"});
}

TEST(MetricWindowTest, TcpRetransmitSpikeBeforeTheStallIsReported) {
  MetricWindow window;
  double t = 0, retx = 0;
  for (; t < 300; t += 5) {
    retx += t < 240 ? 1 : 500;  // a spike in the last minute before the stall
    window.AddScrape("node1", t, Scrape(97, 700, retx, t));
  }
  for (; t < 360; t += 5) window.AddScrape("node1", t, Scrape(100, 280, retx, 299));
  StallEvidence evidence = window.Evidence(t, 0, 299, 30);
  ASSERT_TRUE(evidence.hosts[0].tcp_retransmit_rate.has_value());
  EXPECT_GT(*evidence.hosts[0].tcp_retransmit_rate, 50);
  EXPECT_LT(*evidence.hosts[0].tcp_retransmit_baseline, 1);
  EXPECT_NE(ClassifyStall(evidence).evidence[0].find("TCP retransmits"), std::string::npos);
}

TEST(MetricWindowTest, MemoryIsBoundedByTheHorizon) {
  MetricWindow window(600, 1024);
  for (double t = 0; t < 100000; t += 5) window.AddScrape("node1", t, Scrape(97, 700, t, t));
  EXPECT_LE(window.point_count(), window.series_count() * (600 / 5 + 1));
}

// ---- JobProgress ----

std::string StepLine(int task, int step) {
  return std::to_string(task) + ": completed step: " + std::to_string(step) +
         ", seconds: 1.000, TFLOP/s/device: 450.000, MFU: 34.42%, Tokens/s/device: 8000.000, "
         "loss: 7.000\n";
}

TEST(JobProgressTest, FollowsTheLogLearnsCheckpointsAndResumesAfterARestart) {
  TempDir dir;
  fs::path log = dir.path / "job.log";
  Append(log, "0: Config param checkpoint_period: 10\n");
  JobProgress job(7, log.string(), Policy(), 0);
  double now = 100;
  for (int step = 0; step <= 20; ++step) {
    Append(log, StepLine(0, step) + StepLine(1, step));
    ASSERT_TRUE(job.Poll(now).ok());
    now += step == 10 ? 25 : 1;  // the checkpoint after step 10 takes 25 s
  }
  now -= 1;
  EXPECT_EQ(job.profile(), triage::StepProfile::kMaxText);
  ProgressState s = job.Evaluate(now);
  EXPECT_EQ(*s.last_step, 20);
  EXPECT_TRUE(s.checkpoint_grace) << "step 20 is a checkpoint step (period 10)";
  EXPECT_DOUBLE_EQ(s.threshold_seconds, 37.5) << "1.5 x the 25 s pause learned at step 10";
  EXPECT_EQ(job.tail().back(), StepLine(1, 20).substr(0, StepLine(1, 20).size() - 1));

  // The daemon stops; two more steps arrive; it restarts from SQLite.
  ProgressRecord saved = job.Snapshot(now);
  Append(log, StepLine(0, 21) + StepLine(0, 22));
  JobProgress restarted(7, log.string(), Policy(), 0);
  restarted.Restore(saved);
  ASSERT_TRUE(restarted.Poll(now + 1).ok());
  EXPECT_EQ(restarted.tail().size(), 2u) << "only the lines written while it was down";
  ProgressState after = restarted.Evaluate(now + 1);
  EXPECT_EQ(*after.last_step, 22);
  EXPECT_NEAR(*after.p99_interval, 1.0, 1e-9);
  EXPECT_EQ(restarted.Evaluate(now + 1 + 9).phase, Phase::kTraining);
  EXPECT_EQ(restarted.Evaluate(now + 1 + 11).phase, Phase::kStalled);
}

TEST(JobProgressTest, StepTimesComeFromTheLinesOwnStampsNotTheirArrival) {
  // torchtitan's line (torchtitan/components/metrics.py logger.info, Python
  // logging's default asctime) carries no step time, only its stamp: a
  // backlog read in one poll must not make every step take 0 s.
  TempDir dir;
  fs::path log = dir.path / "job.log";
  for (int step = 1; step <= 12; ++step) {
    Append(log, "2025-01-01 12:00:" + std::string(step * 4 < 10 ? "0" : "") +
                    std::to_string(step * 4) + ",000 - root - INFO - step: " +
                    std::to_string(step) + "  loss: 7.1234  memory: 10.00GiB(12.34%)\n");
  }
  JobProgress job(9, log.string(), Policy(), 0);
  ASSERT_TRUE(job.Poll(500).ok());
  EXPECT_EQ(job.profile(), triage::StepProfile::kTorchTitan);
  ProgressState s = job.Evaluate(500);
  ASSERT_TRUE(s.p99_interval.has_value());
  EXPECT_NEAR(*s.p99_interval, 4.0, 1e-9) << "4 s between the lines' stamps";
}

TEST(JobProgressTest, RecognisesMegatronFromTheCorpus) {
  JobProgress job(8, std::string(JOBMON_FIXTURES) + "/logs/megatron-profile.log", Policy(), 0);
  ASSERT_TRUE(job.Poll(50).ok());
  EXPECT_EQ(job.profile(), triage::StepProfile::kMegatron);
  EXPECT_TRUE(job.Evaluate(50).last_step.has_value());
}

// ---- Slurm jobs ----

TEST(SlurmJobsTest, ParsesSqueueJsonRecordedFromTheDevCluster) {
  // tests/fixtures/slurm/record.sh made it; see there for the four jobs.
  std::ifstream in(std::string(JOBMON_FIXTURES) + "/slurm/squeue-json.json");
  std::stringstream text;
  text << in.rdbuf();
  auto parsed = ParseSqueueJson(text.str());
  ASSERT_TRUE(parsed.ok()) << parsed.error().message;
  const auto& jobs = *parsed;
  ASSERT_EQ(jobs.size(), 4u);
  EXPECT_EQ(jobs[0].job_id, 1u);
  EXPECT_EQ(jobs[0].name, "llama-7b");
  EXPECT_EQ(jobs[0].user, "root");
  EXPECT_EQ(jobs[0].uid, 0u);
  EXPECT_EQ(jobs[0].state, "RUNNING");
  EXPECT_EQ(jobs[0].node_list, "node[1-2]");
  EXPECT_EQ(jobs[0].num_nodes, 2);
  EXPECT_EQ(jobs[0].std_out, "/tmp/jm-rec/jobs/run-1.out") << "%j expanded as scontrol does";
  EXPECT_TRUE(jobs[0].start_time.has_value());
  EXPECT_FALSE(IsTerminalState(jobs[0].state));
  EXPECT_EQ(jobs[1].name, "eval job") << "a value with a space";
  EXPECT_EQ(jobs[1].state, "FAILED");
  EXPECT_EQ(jobs[1].exit_code, "3:0");
  EXPECT_TRUE(IsTerminalState(jobs[1].state));
  EXPECT_EQ(jobs[3].user, "nobody");
  EXPECT_EQ(jobs[3].uid, 65534u);
  EXPECT_EQ(jobs[3].gid, 65534u);
  EXPECT_EQ(jobs[3].std_out, "/tmp/jm-rec/jobs/slurm-4.out") << "Slurm's default, no -o";
  EXPECT_FALSE(ParseSqueueJson("No jobs in the system\n").ok());
  EXPECT_TRUE(ParseSqueueJson(R"({"jobs": [{"job_id": 5}]})")->empty()) << "no user id";
}

TEST(SlurmJobsTest, AJobFieldCannotInjectAnotherField) {
  // Recorded: job 3 is named "x StdOut=/etc/shadow UserId=root(0)
  // NodeList=evil[1-2]" and commented " StdOut=/etc/gshadow". In the JSON
  // those are strings and nothing else.
  std::ifstream in(std::string(JOBMON_FIXTURES) + "/slurm/squeue-json.json");
  std::stringstream text;
  text << in.rdbuf();
  auto jobs = ParseSqueueJson(text.str()).value();
  ASSERT_EQ(jobs[2].job_id, 3u);
  EXPECT_EQ(jobs[2].name, "x StdOut=/etc/shadow UserId=root(0) NodeList=evil[1-2]");
  EXPECT_EQ(jobs[2].std_out, "/tmp/jm-rec/jobs/inj-3.out");
  EXPECT_EQ(jobs[2].node_list, "node2");
  // The same job in `scontrol -o show job`, recorded alongside: the text
  // form carries the injected StdOut as a field of its own.
  std::ifstream one_line(std::string(JOBMON_FIXTURES) + "/slurm/scontrol-o-show-job-injected.txt");
  std::stringstream lines;
  lines << one_line.rdbuf();
  EXPECT_NE(lines.str().find(" StdOut=/etc/shadow "), std::string::npos);
  // A hand-made answer with every trick in one job.
  auto crafted = ParseSqueueJson(R"J({"jobs": [{"job_id": 9, "user_id": 1000, "group_id": 1000,
      "user_name": "mallory", "batch_flag": true, "current_working_directory": "/home/m",
      "name": "a StdOut=/etc/shadow", "comment": " StdOut=/etc/shadow UserId=root(0)",
      "mail_user": "b StdOut=/root/.ssh/id_rsa", "standard_output": "/home/m/%x-%j.out",
      "nodes": "n1"}]})J");
  ASSERT_TRUE(crafted.ok());
  ASSERT_EQ(crafted->size(), 1u);
  EXPECT_EQ((*crafted)[0].uid, 1000u);
  EXPECT_EQ((*crafted)[0].std_out, "/home/m/a StdOut=/etc/shadow-9.out");
}

TEST(SlurmJobsTest, StdoutPatternsExpandAsSlurmDoes) {
  SlurmJob job;
  job.job_id = 42;
  job.user = "alice";
  job.name = "llama";
  job.work_dir = "/w";
  EXPECT_EQ(ExpandStdoutPattern("out/%x-%j.log", job, 0, std::nullopt), "/w/out/llama-42.log");
  EXPECT_EQ(ExpandStdoutPattern("/o/%u-%5j-%%-%N", job, 0, std::nullopt), "/o/alice-00042-%-%N");
  EXPECT_EQ(ExpandStdoutPattern("", job, 0, std::nullopt), "/w/slurm-42.out");
  EXPECT_EQ(ExpandStdoutPattern("", job, 40, 3u), "/w/slurm-40_3.out");
  EXPECT_EQ(ExpandStdoutPattern("/o/%A_%a", job, 40, 3u), "/o/40_3");
}

// ---- StateStore ----

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

// Hardening item 15: the state DB (job names, users, log paths, alert
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

}  // namespace
}  // namespace jobmon::monitor
