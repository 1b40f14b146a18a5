// The time frame of a diagnosis: triage facts (heartbeat stop = failure -
// timeout), the step map, checkpoint windows, the rate window, the windows
// of interest and the tb_step cross-check.

#include "window.h"

#include <gtest/gtest.h>

#include <cmath>

#include "canned_prom_source.h"
#include "diagnose_series.h"

namespace jobmon::diagnose {
namespace {

using testing::CannedPromSource;

TEST(Window, HeartbeatStopIsTheFailureTimeMinusTheTimeout) {
  triage::TriageReport report;
  report.primary = "heartbeat-timeout";
  report.status = triage::JobStatus::kFailed;
  report.failure_time = 5000;
  report.heartbeat_timeout_seconds = 100;
  report.heartbeat = triage::HeartbeatChecklist{};
  report.heartbeat->accused = {3, 2};
  report.heartbeat->hosts = {{3, "node004"}, {2, "node003"}};
  report.head_node = "node001";
  report.progress.last_step = 41;
  report.progress.last_step_time = 4890;
  report.progress.checkpointing = true;
  report.progress.checkpoint_period = 20;
  TriageFacts f = FactsFromTriage(report);
  EXPECT_EQ(f.primary_class, "heartbeat-timeout");
  EXPECT_EQ(f.status, "failed");
  EXPECT_EQ(f.crash_time, 5000);
  EXPECT_EQ(f.heartbeat_stop, 4900);
  EXPECT_EQ(f.accused_hosts, (std::vector<std::string>{"node004", "node003"}));
  EXPECT_EQ(f.coordinator_host, "node001");
  EXPECT_EQ(f.last_step, 41);
  EXPECT_EQ(f.checkpoint_period, 20);
  EXPECT_FALSE(f.hang_start) << "not a hang";

  report.primary = "hang";
  report.heartbeat.reset();
  report.progress.checkpointing = false;
  f = FactsFromTriage(report);
  EXPECT_EQ(f.hang_start, 4890) << "a hang starts at the last step";
  EXPECT_FALSE(f.heartbeat_stop);
  EXPECT_FALSE(f.checkpoint_period) << "no checkpointing, no checkpoint windows";
}

TEST(Window, StepMapIsTheFirstTimeEachStepIsSeenOnAnyHost) {
  std::vector<Series> tb_step = {
      {{{"host", "a"}}, {{10, 0}, {15, 0}, {20, 1}, {25, 3}}},
      {{{"host", "b"}}, {{10, 0}, {20, 0}, {25, 2}, {30, 3}, {35, 4}}},
  };
  auto map = StepMapFromSeries(tb_step);
  ASSERT_EQ(map.size(), 4u);
  EXPECT_EQ(map[0].step, 0);
  EXPECT_EQ(map[0].time, 10);
  EXPECT_EQ(map[1].step, 1);
  EXPECT_EQ(map[1].time, 20);
  EXPECT_EQ(map[2].step, 3);
  EXPECT_EQ(map[2].time, 25) << "a lagging host's step 2 at 25 is not news";
  EXPECT_EQ(map[3].step, 4);

  CannedPromSource source;
  source.Answer("tb_step", tb_step);
  auto queried = QueryStepMap(source, {0, 100}, 5);
  ASSERT_TRUE(queried.ok());
  EXPECT_EQ(queried->size(), 4u);
  EXPECT_EQ(source.asked().back(), "max(tb_step)");
}

TEST(Window, StepMapFromTheLogsStampedStepLines) {
  std::vector<std::string_view> lines = {
      "2026-11-20 10:00:00 starting",
      "2026-11-20 10:00:05 completed step: 0, seconds: 5.000, loss: 10.0",
      "2026-11-20 10:00:07 completed step: 1, seconds: 2.000, loss: 9.0",
      "completed step: 2, seconds: 2.000, loss: 8.0",
      "2026-11-20 10:00:11 completed step: 3, seconds: 2.000, loss: 7.0",
      "2026-11-20 10:00:12 completed step: 3, seconds: 2.000, loss: 7.0",
  };
  auto map = StepMapFromLogLines(lines, 2026);
  ASSERT_EQ(map.size(), 3u) << "step 2's line has no stamp; the repeat of 3 is not news";
  EXPECT_EQ(map[0].step, 0);
  EXPECT_DOUBLE_EQ(map[0].time, 1795168805.0);
  EXPECT_EQ(map[2].step, 3);
  EXPECT_DOUBLE_EQ(map[2].time, 1795168811.0);
}

TEST(Window, CheckpointWindowsCoverTheSaveAndTwoStepsAfter) {
  std::vector<StepTime> steps;
  for (int64_t s = 0; s <= 60; ++s) steps.push_back({s, 100.0 + 10.0 * static_cast<double>(s)});
  auto windows = CheckpointWindows(steps, 20);
  ASSERT_EQ(windows.size(), 3u);
  EXPECT_EQ(windows[0].step, 20);
  EXPECT_EQ(windows[0].range.start, 290) << "from step 19's time (the save follows step 20)";
  EXPECT_EQ(windows[0].range.end, 330) << "to step 23's: steps 21 and 22 run beside the save";
  EXPECT_EQ(windows[2].range.end, 700) << "the last save runs to the map's end";
  DiagnoseContext c;
  c.checkpoints = windows;
  EXPECT_TRUE(c.InCheckpoint(305));
  EXPECT_FALSE(c.InCheckpoint(350));

  // A map at scrape resolution skips steps: the window is what the map knows.
  auto sparse = CheckpointWindows({{0, 100}, {7, 170}, {18, 280}, {25, 350}, {31, 410}}, 20);
  ASSERT_EQ(sparse.size(), 1u);
  EXPECT_EQ(sparse[0].range.start, 280);
  EXPECT_EQ(sparse[0].range.end, 350);
  EXPECT_TRUE(CheckpointWindows(steps, 0).empty());
}

TEST(Window, RateWindowShrinksForShortJobsButKeepsFourScrapes) {
  EXPECT_EQ(RateWindowSeconds(3600, 5), 300);
  EXPECT_EQ(RateWindowSeconds(600, 5), 150);
  EXPECT_EQ(RateWindowSeconds(60, 5), 20);
}

TEST(Window, WindowsOfInterest) {
  DiagnoseContext c;
  c.job_range = {0, 10000};
  c.rate_window_seconds = 300;
  c.triage.heartbeat_stop = 4900;
  c.triage.crash_time = 5000;
  TimeRange hb = WindowFor("heartbeat", c);
  EXPECT_EQ(hb.start, 4600);
  EXPECT_EQ(hb.end, 5000);
  c.triage.hang_start = 777;
  TimeRange hang = WindowFor("hang", c);
  EXPECT_EQ(hang.start, 777);
  EXPECT_EQ(hang.end, 10000);
  c.triage.hang_start.reset();
  c.triage.last_step = 5;
  c.steps = {{0, 100}, {5, 600}, {6, 700}};
  EXPECT_EQ(WindowFor("hang", c).start, 600) << "the log's last step through the step map";
  TimeRange health = WindowFor("gpu-health", c);
  EXPECT_EQ(health.start, 0);
  EXPECT_EQ(health.end, 10000);
  c.triage.heartbeat_stop = -50;  // before the TSDB's data: clamped
  EXPECT_EQ(WindowFor("heartbeat", c).start, 0);
}

TEST(Window, CrossCheckOfTbStepAgainstTheLog) {
  EXPECT_TRUE(CompareSteps(120, 120, 0.5).matches);
  EXPECT_TRUE(CompareSteps(119, 120, 0.5).matches) << "tb_step and the log may count from 1 and 0";
  EXPECT_TRUE(CompareSteps(116, 120, 4).matches) << "a scrape interval holds 4 steps";
  CrossCheck wrong = CompareSteps(40, 120, 4);
  EXPECT_TRUE(wrong.checked);
  EXPECT_FALSE(wrong.matches);
  EXPECT_NE(wrong.sentence.find("wrong TSDB?"), std::string::npos);
  CrossCheck unknown = CompareSteps(std::nullopt, 120, 1);
  EXPECT_FALSE(unknown.checked);
  EXPECT_TRUE(unknown.matches) << "nothing to contradict";

  // From the TSDB: tb_step ends at 30 (a step every 10 s), the log says 55.
  CannedPromSource source;
  source.Answer("tb_step", {testing::Grid({{"host", "a"}}, 0, 300, 5,
                                          [](double t) { return std::floor(t / 10); })});
  DiagnoseContext c;
  c.job_range = {0, 300};
  c.scrape_interval_seconds = 5;
  c.steps = {{0, 0}, {30, 300}};
  c.triage.last_step = 55;
  CrossCheck check = CrossCheckTsdb(source, c);
  EXPECT_FALSE(check.matches);
  EXPECT_NE(check.sentence.find("(30)"), std::string::npos);
  c.triage.last_step = 30;
  EXPECT_TRUE(CrossCheckTsdb(source, c).matches);
}

}  // namespace
}  // namespace jobmon::diagnose
