#include "jobmon/triage/step_lines.h"

#include <gtest/gtest.h>

#include "jobmon/triage/step_series.h"

namespace jobmon::triage {
namespace {

TEST(StepLines, MaxText) {
  auto s = ParseMaxTextStep(
      "3: completed step: 316, seconds: 12.345, TFLOP/s/device: 451.2, MFU: 34.51%, loss: 2.0");
  ASSERT_TRUE(s);
  EXPECT_EQ(s->step, 316);
  EXPECT_DOUBLE_EQ(*s->seconds, 12.345);
  EXPECT_FALSE(ParseMaxTextStep("completed step: x, seconds: 1"));
  EXPECT_FALSE(ParseMaxTextStep("completed step: -3, seconds: 1"));
  EXPECT_FALSE(ParseMaxTextStep("completed step: 4, seconds: nan")->seconds);
}

TEST(StepLines, MegatronIsOneBased) {
  auto s = ParseMegatronStep(
      " [2024-01-01 12:00:00] iteration      100/  500000 | consumed samples: 102400 | elapsed "
      "time "
      "per iteration (ms): 1234.5 | learning rate: 3.0E-04 |");
  ASSERT_TRUE(s);
  EXPECT_EQ(s->step, 99);
  EXPECT_EQ(*s->total_steps, 500000);
  EXPECT_DOUBLE_EQ(*s->seconds, 1.2345);
  EXPECT_DOUBLE_EQ(*s->timestamp, 1704110400.0);
}

TEST(StepLines, TorchTitanTakesTimeFromTimestamps) {
  auto s = ParseTorchTitanStep(
      "[rank0]:[titan] 2025-01-01 12:00:00,250 - root - INFO - step:  10  loss:  7.1234  memory: "
      "30.12GiB(38.05%)  tps: 3,456");
  ASSERT_TRUE(s);
  EXPECT_EQ(s->step, 10);
  EXPECT_FALSE(s->seconds);
  EXPECT_DOUBLE_EQ(*s->timestamp, 1735732800.25);
}

TEST(StepLines, TqdmLastUpdateOfACarriageReturnLine) {
  auto s = ParseTqdmStep(
      " 1%|   | 1/1000 [00:01<16:40,  1.00s/it]\r 2%|   | 2/1000 [00:02<16:39,  2.50it/s]");
  ASSERT_TRUE(s);
  EXPECT_EQ(s->step, 1);
  EXPECT_EQ(*s->total_steps, 1000);
  EXPECT_DOUBLE_EQ(*s->seconds, 0.4);
  EXPECT_FALSE(ParseTqdmStep("progress 5/10 done"));
}

TEST(StepLines, Timestamps) {
  EXPECT_DOUBLE_EQ(*ParseIsoTimestamp("2026-11-20T10:00:00Z"), 1795168800.0);
  EXPECT_DOUBLE_EQ(*ParseIsoTimestamp("2026-11-20 10:00:00.5"), 1795168800.5);
  EXPECT_FALSE(ParseIsoTimestamp("2026-13-20T10:00:00"));
  EXPECT_FALSE(ParseIsoTimestamp("2026-11-20"));
  EXPECT_DOUBLE_EQ(*FindIsoTimestamp("*** JOB 5 CANCELLED AT 2026-11-20T10:00:00 ***"),
                   1795168800.0);
  EXPECT_FALSE(FindIsoTimestamp("no time here 12:00:00"));
}

TEST(StepLines, TaskLabels) {
  EXPECT_EQ(TaskLabel("0: completed step: 1"), 0);
  EXPECT_EQ(TaskLabel("  12: x"), 12);
  EXPECT_FALSE(TaskLabel("completed step: 1"));
  EXPECT_FALSE(TaskLabel("10:00:00 started"));
  EXPECT_EQ(WithoutTaskLabel("3: hello"), "hello");
}

TEST(StepSeries, WarmupRecentWindowAndSlowdown) {
  StepSeries series;
  for (int step = 0; step < 60; ++step) {
    double seconds = step < 5 ? 9.0 : (step >= 50 ? 1.5 : 1.0);
    series.Add(step, seconds, static_cast<uint64_t>(step + 1), false);
  }
  series.Add(10, 1.0, 99, false);  // a repeat (another task or a restart)
  EXPECT_EQ(series.count(), 60u);
  EXPECT_EQ(series.repeats(), 1u);
  EXPECT_NEAR(*series.SteadyStepSeconds(), (45 * 1.0 + 10 * 1.5) / 55, 1e-9) << "warmup skipped";
  EXPECT_DOUBLE_EQ(*series.RecentMedian(), 1.0);
  EXPECT_DOUBLE_EQ(*series.RecentP99(), 1.5);
  EXPECT_NEAR(*series.TailSlowdown(), 1.5, 1e-9);
}

TEST(StepSeries, CheckpointStepsStayOutOfTheRecentWindow) {
  StepSeries series;
  for (int step = 0; step < 40; ++step)
    series.Add(step, step % 10 == 0 ? 30.0 : 1.0, step, step % 10 == 0);
  EXPECT_DOUBLE_EQ(*series.RecentP99(), 1.0);
  EXPECT_FALSE(StepSeries().SteadyStepSeconds());
}

TEST(Percentile, NearestRank) {
  EXPECT_DOUBLE_EQ(Percentile({5, 1, 3}, 0.5), 3);
  EXPECT_DOUBLE_EQ(Percentile({1, 2, 3, 4}, 0.99), 4);
  EXPECT_DOUBLE_EQ(Percentile({}, 0.5), 0);
}

}  // namespace
}  // namespace jobmon::triage
