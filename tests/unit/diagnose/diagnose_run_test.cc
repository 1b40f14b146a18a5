// The orchestration: discovery, window, cross-check, observability and the
// selected playbooks, with progress lines; failures stay values.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "canned_prom_source.h"
#include "diagnose.h"
#include "diagnose_series.h"

namespace jobmon::diagnose {
namespace {

using testing::CannedPromSource;
using testing::Grid;

std::vector<std::string> Names(const std::vector<const PlaybookSpec*>& specs) {
  std::vector<std::string> out;
  for (const PlaybookSpec* s : specs) out.emplace_back(s->name);
  return out;
}

TEST(Diagnose, PlaybookSelection) {
  auto by_class = SelectPlaybooks({}, "unknown-death");
  ASSERT_TRUE(by_class.ok());
  EXPECT_EQ(Names(*by_class), (std::vector<std::string>{"oom", "hardware"}));
  auto health = SelectPlaybooks({"health", "gpu", "hang"}, "");
  ASSERT_TRUE(health.ok());
  EXPECT_EQ(Names(*health), (std::vector<std::string>{"gpu", "network", "training", "hang"}))
      << "each once, in the order asked";
  auto unknown = SelectPlaybooks({"hangs"}, "");
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.error().message.find("'hangs'"), std::string::npos);
}

CannedPromSource Job(double last_tb_step) {
  CannedPromSource source;
  source.Labels("__name__", {"hw_gpu_power_watts", "hw_net_rx_bytes_total", "tb_step", "up"});
  source.Labels("host", {"n1", "n2"});
  source.Answer("tb_step", {Grid({{"host", "n1"}}, 1000, 1600, 5, [=](double t) {
                  return std::min(last_tb_step, std::floor((t - 1000) / 10));
                })});
  source.Answer("timestamp(up)",
                {Grid({{"host", "n1"}}, 1000, 1600, 5, [](double t) { return t; }),
                 Grid({{"host", "n2"}}, 1000, 1600, 5, [](double t) { return t; })});
  source.Answer("up", {Grid({{"host", "n1"}}, 1000, 1600, 5, [](double) { return 1; }),
                       Grid({{"host", "n2"}}, 1000, 1600, 5, [](double) { return 1; })});
  return source;
}

DiagnoseInputs HeartbeatInputs() {
  DiagnoseInputs in;
  in.job = "4242";
  in.tsdb_range = {900, 1700};
  in.scrape_interval_seconds = 5;
  triage::TriageReport report;
  report.primary = "heartbeat-timeout";
  report.status = triage::JobStatus::kFailed;
  report.failure_time = 1550;
  report.heartbeat_timeout_seconds = 100;
  report.heartbeat = triage::HeartbeatChecklist{};
  report.progress.last_step = 60;
  report.progress.checkpointing = true;
  report.progress.checkpoint_period = 20;
  in.triage = report;
  Manifest manifest;
  manifest.nodes = {"n1", "n2"};
  in.manifest = manifest;
  return in;
}

TEST(Diagnose, RunsEveryStepThenTheTriageClassesPlaybooks) {
  CannedPromSource source = Job(60);
  std::vector<std::string> progress;
  Diagnosis d = Diagnose(source, HeartbeatInputs(),
                         [&](std::string_view line) { progress.emplace_back(line); });
  EXPECT_EQ(d.source, "canned answers (unit test)");
  EXPECT_EQ(d.context.job, "4242");
  EXPECT_EQ(d.context.hosts.size(), 2u);
  EXPECT_EQ(d.context.job_range.start, 1000);
  EXPECT_EQ(d.context.rate_window_seconds, 150) << "a quarter of the 10-minute job";
  EXPECT_EQ(d.context.triage.heartbeat_stop, 1450);
  EXPECT_EQ(d.context.steps.size(), 61u);
  EXPECT_EQ(d.context.checkpoints.size(), 3u) << "saves at steps 20, 40, 60";
  EXPECT_TRUE(d.tsdb_matches_log) << d.tsdb_check;
  EXPECT_TRUE(d.observability.problems.empty());
  ASSERT_EQ(d.playbooks.size(), 1u);
  EXPECT_EQ(d.playbooks[0].playbook, "heartbeat");
  EXPECT_FALSE(d.playbooks[0].verdict.empty());
  ASSERT_GE(progress.size(), 5u);
  EXPECT_EQ(progress[0].rfind("discovery: 4 families", 0), 0u) << progress[0];
  EXPECT_NE(progress[0].find("2 hosts"), std::string::npos);
  bool playbook_line = false;
  for (const auto& line : progress) playbook_line |= line.rfind("playbook heartbeat", 0) == 0;
  EXPECT_TRUE(playbook_line);
}

TEST(Diagnose, TheScrapeIntervalIsTheDatasNotTheDefault) {
  // Scraped every second (a dev cluster's scrape_interval=1s); the input's
  // 5 s is only the fallback.
  CannedPromSource source;
  source.Labels("__name__", {"up"});
  source.Labels("host", {"n1"});
  source.Answer("timestamp(up)",
                {Grid({{"host", "n1"}}, 1000, 1040, 1, [](double t) { return t; })});
  DiagnoseInputs in;
  in.tsdb_range = {1000, 1040};
  in.playbooks = {"none"};
  std::vector<std::string> progress;
  Diagnosis d = Diagnose(source, in, [&](std::string_view line) { progress.emplace_back(line); });
  EXPECT_EQ(d.context.scrape_interval_seconds, 1);
  EXPECT_EQ(d.context.rate_window_seconds, 10) << "a quarter of the 40 s job, over 4 scrapes";
  EXPECT_TRUE(std::any_of(progress.begin(), progress.end(), [](const std::string& line) {
    return line == "scrape interval: 1s (from the spacing of `up` samples)";
  }));

  // No `up` to measure: the fallback (the diag dir's prometheus.yml), said.
  CannedPromSource bare;
  in.scrape_interval_seconds = 15;
  in.scrape_interval_from_config = true;
  d = Diagnose(bare, in);
  EXPECT_EQ(d.context.scrape_interval_seconds, 15);
  EXPECT_TRUE(std::any_of(d.warnings.begin(), d.warnings.end(), [](const std::string& w) {
    return w.find("assuming 15s (the diag dir's prometheus.yml)") != std::string::npos;
  }));
}

TEST(Diagnose, AnotherJobsTsdbIsALoudWarning) {
  CannedPromSource source = Job(12);  // this TSDB's job stopped at step 12
  Diagnosis d = Diagnose(source, HeartbeatInputs());
  EXPECT_FALSE(d.tsdb_matches_log);
  ASSERT_FALSE(d.warnings.empty());
  EXPECT_EQ(d.warnings[0].rfind("WRONG TSDB?", 0), 0u) << d.warnings[0];
}

// A source whose every query fails: the diagnosis still comes back.
class BrokenSource : public PromSource {
 public:
  Expected<std::vector<Series>> QueryRange(std::string_view, const TimeRange&, double) override {
    return Error{"connection refused"};
  }
  Expected<std::vector<Series>> QueryInstant(std::string_view, double) override {
    return Error{"connection refused"};
  }
  Expected<std::vector<std::string>> LabelValues(std::string_view, const std::optional<TimeRange>&,
                                                 std::string_view) override {
    return Error{"connection refused"};
  }
  std::string Describe() const override { return "nowhere"; }
};

TEST(Diagnose, FailedQueriesAreErrorsNotAnAbort) {
  BrokenSource source;
  DiagnoseInputs in = HeartbeatInputs();
  in.playbooks = {"hang", "gpu"};
  Diagnosis d = Diagnose(source, in);
  EXPECT_FALSE(d.warnings.empty());
  EXPECT_FALSE(d.observability.errors.empty());
  EXPECT_EQ(d.playbooks.size(), 2u);
  EXPECT_TRUE(d.tsdb_matches_log) << "nothing read, nothing contradicted";
}

}  // namespace
}  // namespace jobmon::diagnose
